"""What an exception of the HTTP stack means for an outbound call, as a project error.

Sending goes through httpx, httpcore, h11, anyio, the ``ssl`` and ``socket`` modules; each can
raise its own exceptions, and not all of them are ``httpx.HTTPError``. :func:`outbound_failure`
turns any of them into one of three project errors, by kind:

- :class:`~dynamic_tools.errors.TransportError` (retryable): the network or the peer failed —
  timeouts (``timed_out``), connection and read/write errors, TLS errors, a peer breaking the
  HTTP protocol, any ``OSError``.
- :class:`~dynamic_tools.errors.RequestNotSendableError` (not retryable): the request itself
  cannot be put on the wire — an invalid URL or port, a header value outside ASCII, a local
  protocol violation, an unsupported scheme; the same request would fail again.
- :class:`~dynamic_tools.errors.OutboundError` (not retryable): anything else, named by its type.

Messages name the method, the URL without its query string and the exception's type; the
exception's own text is kept only for the not-sendable kind (it says what to fix), and every
secret value of the request is scrubbed from the result.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence

import anyio
import h11
import httpcore
import httpx

from dynamic_tools.errors import (
    OutboundError,
    RequestNotSendableError,
    TransportError,
)

_TIMEOUTS: tuple[type[BaseException], ...] = (
    httpx.TimeoutException,
    httpcore.TimeoutException,
    TimeoutError,
)
_NOT_SENDABLE: tuple[type[BaseException], ...] = (
    httpx.InvalidURL,
    httpx.UnsupportedProtocol,
    httpx.LocalProtocolError,
    httpcore.UnsupportedProtocol,
    httpcore.LocalProtocolError,
    h11.LocalProtocolError,
    UnicodeError,  # a header or URL that does not encode (UnicodeEncodeError)
    ValueError,  # an invalid port or host (e.g. 'host:1:2')
    TypeError,
)
_TRANSPORT: tuple[type[BaseException], ...] = (
    httpx.TransportError,  # network, remote protocol, proxy errors
    httpx.DecodingError,  # the answer's body could not be decoded
    httpcore.NetworkError,
    httpcore.RemoteProtocolError,
    httpcore.ProxyError,
    h11.RemoteProtocolError,
    ssl.SSLError,
    OSError,  # ConnectionError, socket.gaierror, BrokenPipeError, ...
    EOFError,  # asyncio.IncompleteReadError
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)
_MAX_DETAIL = 200


def outbound_failure(
    exc: Exception,
    *,
    what: str,
    context: dict[str, str],
    secrets: Sequence[str] = (),
) -> OutboundError:
    """The project error for ``exc``, raised while sending ``what`` (e.g. ``GET https://h/p``).

    ``secrets`` are replaced by ``***`` in the message.
    """
    kind = type(exc).__name__
    error: OutboundError
    if isinstance(exc, _TIMEOUTS):
        error = TransportError(f"{what} timed out ({kind})", context=context, timed_out=True)
    elif isinstance(exc, _NOT_SENDABLE) and not isinstance(exc, _TRANSPORT):
        detail = " ".join(str(exc).split())[:_MAX_DETAIL]
        error = RequestNotSendableError(
            f"{what} cannot be sent ({kind}{': ' + detail if detail else ''})",
            context={**context, "exception": kind},
        )
    elif isinstance(exc, _TRANSPORT):
        error = TransportError(f"{what} failed ({kind})", context={**context, "exception": kind})
    else:
        error = OutboundError(
            f"{what} failed with an unexpected error ({kind})",
            context={**context, "exception": kind},
        )
    for secret in secrets:
        if len(secret) >= 4:  # as the log redactor: shorter values would mangle the text
            error.message = error.message.replace(secret, "***")
    error.args = (error.message,)
    return error
