"""The headers of an outbound request: the request's own, then what a caller adds, safely.

A request carries the headers its tool built (static values, header parameters, and what the
tool's ``auth`` set: its credential). A caller may add headers (``extra``: an MCP session's
``X-Target-Headers`` for the session's own API). Adding follows three rules, so a session can
neither take over a tool's identity nor change how the request travels:

- names compare case-insensitively: ``authorization`` replaces ``Authorization``, never sits
  next to it (both would be sent);
- an added header never replaces one the tool's ``auth`` set: the tool's credential wins;
- names that change where or how the request travels, or who it claims to come from
  (:func:`refused_reason`), are never added. ``Idempotency-Key`` is one of them: the engine's
  own key travels on the request (:attr:`PreparedRequest.idempotency_key`), set by the caller
  that runs the step, and is written last.

Sessions are refused such names when they start (``mcp/session_config.py``, with the reason
given here); this is the second line, for whatever reaches the sender.
"""

from __future__ import annotations

from collections.abc import Mapping

from dynamic_tools.http.request_builder import PreparedRequest

__all__ = ["outbound_headers", "refused_reason"]

_IDEMPOTENCY = "Idempotency-Key"

_FRAMING = "it frames the message or the connection, which the HTTP client manages"
_IDENTITY = "it claims who sent the request, which only the network may say"
_REFUSED: dict[str, str] = {
    "host": "it names the server the request is for, which the tool's URL decides",
    "content-length": _FRAMING,
    "transfer-encoding": _FRAMING,
    "connection": _FRAMING,
    "keep-alive": _FRAMING,
    "te": _FRAMING,
    "trailer": _FRAMING,
    "upgrade": _FRAMING,
    "expect": _FRAMING,
    "forwarded": _IDENTITY,
    "via": _IDENTITY,
    "x-real-ip": _IDENTITY,
    "x-client-ip": _IDENTITY,
    "true-client-ip": _IDENTITY,
    "idempotency-key": "it is the engine's own key for a workflow step, the same on every retry",
    "traceparent": "it carries the server's trace context",
    "tracestate": "it carries the server's trace context",
    "x-http-method-override": "it changes the request's method, which the tool decides",
    "x-http-method": "it changes the request's method, which the tool decides",
    "x-method-override": "it changes the request's method, which the tool decides",
    "x-original-url": "it changes the request's path, which the tool decides",
    "x-rewrite-url": "it changes the request's path, which the tool decides",
}
_REFUSED_PREFIXES: tuple[tuple[str, str], ...] = (
    ("proxy-", "it speaks to a proxy on the way, not to the API"),
    ("x-forwarded-", _IDENTITY),
)


def refused_reason(name: str) -> str | None:
    """Why a caller may not add header ``name`` (any case), or None when it may."""
    lower = name.lower()
    reason = _REFUSED.get(lower)
    if reason is not None:
        return reason
    for prefix, why in _REFUSED_PREFIXES:
        if lower.startswith(prefix):
            return why
    return None


def outbound_headers(
    request: PreparedRequest, extra: Mapping[str, str] | None, *, user_agent: str
) -> dict[str, str]:
    """The headers to send: ``user_agent``, the request's own, the allowed ``extra``, the key."""
    merged: dict[str, tuple[str, str]] = {"user-agent": ("User-Agent", user_agent)}
    for name, value in request.headers.items():
        merged[name.lower()] = (name, value)
    for name, value in (extra or {}).items():
        lower = name.lower()
        if lower in request.secret_headers or refused_reason(lower) is not None:
            continue
        merged[lower] = (name, value)
    if request.idempotency_key is not None:
        merged[_IDEMPOTENCY.lower()] = (_IDEMPOTENCY, request.idempotency_key)
    return dict(merged.values())
