"""Fetching documents (OpenAPI descriptions, workflow files) by URL or local path.

:class:`DocumentFetcher` reads a *source*:

- ``http(s)://`` URLs only when the SSRF guard allows the host (``ALLOWED_TARGET_HOSTS``, or a
  host whose every address is public); no redirects (a 3xx is refused with its location); the
  body is capped at ``max_bytes`` (checked on ``Content-Length`` and while decoding, whatever
  the content encoding: ``http/decoding.py``); the whole download has a deadline; no
  credentials in the URL.
- Local paths and ``file://`` URLs only inside the allowed roots (the registry root for the
  server; the CLI, run by the operator, may allow any path). Relative paths are taken from the
  first root. Symbolic links are resolved before the check.

Every refusal or fixable failure raises :class:`DocumentSourceError` naming the path or URL
(violation path ``source``); a connection failure or timeout raises :class:`TransportError`,
and any other failure of the HTTP stack the matching error of ``http/failures.py``.

Given the document fetched before (``previous``), a URL is asked again with a conditional
request (``If-None-Match`` with its ``ETag``, ``If-Modified-Since`` with its ``Last-Modified``):
a ``304 Not Modified`` gives ``previous`` back, without a body. A local file is read again.

With tracing on, a URL fetch is a client span ``GET`` (``url.full`` without the query string,
``server.address``, ``server.port``, ``http.response.status_code``, ``error.type``) and the
request carries its trace context.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
from opentelemetry.trace import Span, SpanKind

from dynamic_tools.errors import DocumentSourceError, TargetRefusedError, TransportError
from dynamic_tools.http.decoding import ACCEPT_ENCODING, UndecodableBody, read_response
from dynamic_tools.http.failures import outbound_failure
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.observability.tracing import Tracing, mark_error
from dynamic_tools.tools.documents import FetchedDocument, SourceType

DEFAULT_MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
DEFAULT_DEADLINE_S = 60.0
USER_AGENT = "dynamic-tools/0.1 (document fetch)"


def infer_source_type(source: str) -> SourceType:
    """``url`` for ``http://`` and ``https://`` sources, else ``path`` (``file://`` included)."""
    return "url" if source.strip().lower().startswith(("http://", "https://")) else "path"


class DocumentFetcher:
    """Reads documents from allowed URLs and allowed local directories."""

    def __init__(
        self,
        *,
        client: httpx.AsyncClient,
        guard: TargetGuard,
        local_roots: Sequence[Path] | None,
        max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
        timeout_s: float = 30.0,
        deadline_s: float = DEFAULT_DEADLINE_S,
        tracing: Tracing | None = None,
    ) -> None:
        """``local_roots=None`` allows any local path (for the operator's CLI only).

        ``timeout_s`` bounds each phase (connect, read...), ``deadline_s`` the whole download.
        """
        self.client = client
        self.guard = guard
        self.local_roots = None if local_roots is None else [Path(r) for r in local_roots]
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.tracing = tracing or Tracing.off()

    async def fetch(
        self,
        source: str,
        source_type: SourceType | None = None,
        *,
        previous: FetchedDocument | None = None,
    ) -> FetchedDocument:
        """The document at ``source`` (a URL or a path; the type is inferred when omitted).

        ``previous``: what an earlier fetch of ``source`` gave; a URL that answers ``304 Not
        Modified`` to the conditional request gives it back (the same object).
        """
        source = source.strip()
        if not source:
            raise _refused("the source is empty", "required", source)
        if _CONTROL.search(source):
            raise _refused(
                "the source contains a control character (NUL, newline, ...)",
                "invalid_characters",
                source.encode("unicode_escape").decode("ascii"),
            )
        kind = source_type or infer_source_type(source)
        if kind == "url":
            _check_url(source)
            return await self._fetch_url(source, previous)
        return await asyncio.to_thread(self._read_path, source)

    # --- URLs ------------------------------------------------------------------------------
    async def _fetch_url(self, source: str, previous: FetchedDocument | None) -> FetchedDocument:
        parts = urlsplit(source)
        try:
            hostname, port = parts.hostname, parts.port
            httpx.URL(source)
        except (ValueError, httpx.InvalidURL) as exc:
            message = f"'{_shown(source)}' is not a valid URL ({exc})"
            raise _refused(message, "invalid_url", source) from None
        if parts.scheme.lower() not in ("http", "https") or not hostname:
            raise _refused(f"'{source}' is not an http(s) URL", "scheme", source)
        if parts.username or parts.password:
            raise _refused(
                "a source URL must not carry credentials", "credentials", _no_auth(source)
            )
        attributes = {
            "http.request.method": "GET",
            "url.full": _shown(source),
            "server.address": hostname,
            "server.port": port or (443 if parts.scheme.lower() == "https" else 80),
        }
        with self.tracing.span("GET", kind=SpanKind.CLIENT, attributes=attributes) as span:
            try:
                await self.guard.check(parts.scheme, hostname, port, parts.path or "/")
            except TargetRefusedError as exc:
                mark_error(span, "refused")
                raise _refused(
                    exc.message, "host_not_allowed", source, host=parts.hostname
                ) from None
            return await self._download(source, span, previous)

    async def _download(
        self, source: str, span: Span, previous: FetchedDocument | None
    ) -> FetchedDocument:
        headers = {
            "User-Agent": USER_AGENT,
            "Accept": "application/json, application/yaml, */*",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        if previous is not None and previous.location == source:
            if previous.etag:
                headers["If-None-Match"] = previous.etag
            if previous.last_modified:
                headers["If-Modified-Since"] = previous.last_modified
        else:
            previous = None
        self.tracing.inject(headers)
        # the whole download, as every outbound call, has a deadline: a source trickling a byte
        # at a time never trips the per-read timeout
        timer = asyncio.timeout(self.deadline_s)
        try:
            async with (
                timer,
                self.client.stream(
                    "GET", source, headers=headers, follow_redirects=False, timeout=self.timeout_s
                ) as response,
            ):
                span.set_attribute("http.response.status_code", response.status_code)
                if response.status_code == 304 and previous is not None:
                    return previous
                if response.status_code >= 300:
                    mark_error(span, str(response.status_code))
                self._check_status(response, source)
                content = await self._read_capped(response, source)
                media_type = response.headers.get("content-type", "").split(";")[0].strip() or None
                etag = response.headers.get("etag")
                last_modified = response.headers.get("last-modified")
        except DocumentSourceError:
            raise
        except Exception as exc:  # every failure of the HTTP stack, by kind (http.failures)
            if timer.expired():
                mark_error(span, "timeout")
                raise TransportError(
                    f"fetching {_shown(source)} did not finish within {self.deadline_s:g} s",
                    context={"url": _shown(source)},
                    timed_out=True,
                ) from None
            timed_out = isinstance(exc, httpx.TimeoutException)
            mark_error(span, "timeout" if timed_out else type(exc).__qualname__)
            raise outbound_failure(
                exc, what=f"fetching {_shown(source)}", context={"url": _shown(source)}
            ) from None
        return FetchedDocument(
            content, source, "url", source, source, media_type, etag, last_modified
        )

    def _check_status(self, response: httpx.Response, source: str) -> None:
        status = response.status_code
        if 300 <= status < 400:
            location = response.headers.get("location", "")
            raise _refused(
                f"{_shown(source)} answered a redirect ({status}) to '{location}'; redirects are "
                "not followed: use the final URL",
                "redirect",
                source,
                status_code=status,
            )
        if status >= 400:
            raise _refused(
                f"{_shown(source)} answered HTTP {status}",
                "http_status",
                source,
                status_code=status,
            )

    async def _read_capped(self, response: httpx.Response, source: str) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise self._too_large(source, int(declared))
        try:
            content, cut = await read_response(response, self.max_bytes)
        except UndecodableBody as exc:
            raise _refused(
                f"{_shown(source)} cannot be read: {exc}", "undecodable", source
            ) from None
        if cut:
            raise self._too_large(source, self.max_bytes + 1)
        return content

    def _too_large(self, source: str, size: int) -> DocumentSourceError:
        return _refused(
            f"{_shown(source)} is over the {self.max_bytes}-byte limit ({size} bytes or more)",
            "max_size",
            source,
        )

    # --- local files -----------------------------------------------------------------------
    def _read_path(self, source: str) -> FetchedDocument:
        try:
            return self._read_local(source)
        except (OSError, RuntimeError, ValueError) as exc:
            # Names the OS cannot take: '~unknown_user', NUL after %-decoding, a name too
            # long, a symbolic link loop. Nothing was read.
            reason = getattr(exc, "strerror", None) or str(exc)
            raise _refused(
                f"the path '{source}' cannot be used: {reason}", "invalid_path", source
            ) from None

    def _read_local(self, source: str) -> FetchedDocument:
        raw = unquote(urlsplit(source).path) if source.lower().startswith("file://") else source
        if _CONTROL.search(raw):
            raise ValueError("it contains a control character")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = (self.local_roots[0] if self.local_roots else Path.cwd()) / path
        resolved = path.resolve()
        if self.local_roots is not None and not any(
            resolved.is_relative_to(root.resolve()) for root in self.local_roots
        ):
            roots = ", ".join(str(r) for r in self.local_roots) or "(none)"
            raise _refused(
                f"the path '{resolved}' is outside the registry root ({roots}); local documents "
                "must be inside it",
                "outside_root",
                source,
                path=str(resolved),
            )
        if not resolved.is_file():
            raise _refused(f"no file at '{resolved}'", "not_found", source, path=str(resolved))
        size = resolved.stat().st_size
        if size > self.max_bytes:
            raise _refused(
                f"'{resolved}' is {size} bytes; the limit is {self.max_bytes}",
                "max_size",
                source,
                path=str(resolved),
            )
        try:
            content = resolved.read_bytes()
        except OSError as exc:
            raise _refused(
                f"cannot read '{resolved}': {exc.strerror}",
                "unreadable",
                source,
                path=str(resolved),
            ) from None
        return FetchedDocument(content, source, "path", str(resolved))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_url(source: str) -> None:
    """Refuse a URL that does not parse, before anything uses its parts.

    A port that is not a number or is out of range, a broken IPv6 literal.
    """
    try:
        parts = urlsplit(source)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise _refused(
            f"'{_shown_unparsed(source)}' is not a valid URL: {exc}", "invalid_url", source
        ) from None


def _shown_unparsed(url: str) -> str:
    """A URL that may not parse, for messages: without query and fragment."""
    return re.split(r"[?#]", url, maxsplit=1)[0]


def _shown(url: str) -> str:
    """A URL for messages: without its query string (it may hold tokens)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _no_auth(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"


def _refused(message: str, rule: str, source: str, **context: Any) -> DocumentSourceError:
    shown = source
    if infer_source_type(source) == "url":
        try:
            shown = _shown(source)
        except ValueError:
            shown = _shown_unparsed(source)
    return DocumentSourceError(
        message,
        violations=[{"path": "source", "rule": rule, "message": message}],
        context={"source": shown, **context},
    )
