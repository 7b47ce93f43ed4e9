"""Sending a prepared request: the SSRF guard, no redirects, timeouts, a size cap.

An HTTP error status is a normal result (the API answered). Only a refusal by the guard, a
transport failure or a timeout raise. Error messages name the method, host and path, never
the query string (secrets may travel there), and any secret value is scrubbed from them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from dynamic_tools.errors import TargetRefusedError, TransportError
from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.nesting import TooDeep, loads_json

MAX_RESPONSE_DEPTH = 100  # a JSON response nested deeper is kept as text

USER_AGENT = "dynamic-tools/0.1"
_DROPPED_RESPONSE_HEADERS = frozenset({"set-cookie", "set-cookie2"})


@dataclass(frozen=True)
class HttpResult:
    """What the API answered."""

    status_code: int
    headers: dict[str, str]
    body: Any
    execution_time_ms: float
    truncated: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``raw_response`` shape of seed 002 (plus headers)."""
        data: dict[str, Any] = {
            "status_code": self.status_code,
            "headers": self.headers,
            "body": self.body,
            "execution_time_ms": round(self.execution_time_ms, 3),
        }
        if self.truncated:
            data["truncated"] = True
        return data


class HttpSender:
    """Sends :class:`PreparedRequest` objects through one shared ``httpx.AsyncClient``."""

    def __init__(
        self, client: httpx.AsyncClient, guard: TargetGuard, *, max_response_bytes: int
    ) -> None:
        self.client = client
        self.guard = guard
        self.max_response_bytes = max_response_bytes

    async def send(
        self,
        request: PreparedRequest,
        *,
        extra_headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> HttpResult:
        """Send ``request``; raise only when it could not be sent or received."""
        url = httpx.URL(request.url)
        await self.guard.check(url.scheme, url.host, url.port)
        headers = {"User-Agent": USER_AGENT, **request.headers, **(extra_headers or {})}
        started = time.perf_counter()
        try:
            outbound = self.client.build_request(
                request.method,
                url,
                params=_query_params(request),
                headers=headers,
                json=request.body if request.body is not None else None,
                timeout=timeout_s if timeout_s else self.client.timeout,
            )
            response = await self.client.send(outbound, follow_redirects=False, stream=True)
            try:
                content, truncated = await self._read_capped(response)
            finally:
                await response.aclose()
        except httpx.TimeoutException as exc:
            raise TransportError(
                self._describe("timed out", request, exc),
                context=self._where(request),
                timed_out=True,
            ) from None
        except httpx.HTTPError as exc:
            raise TransportError(
                self._describe("failed", request, exc), context=self._where(request)
            ) from None
        elapsed_ms = (time.perf_counter() - started) * 1000
        return HttpResult(
            status_code=response.status_code,
            headers={
                k: v
                for k, v in response.headers.items()
                if k.lower() not in _DROPPED_RESPONSE_HEADERS
            },
            body=_decode(content, response.headers.get("content-type", ""), truncated),
            execution_time_ms=elapsed_ms,
            truncated=truncated,
        )

    async def _read_capped(self, response: httpx.Response) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_response_bytes:
                return b"".join(chunks)[: self.max_response_bytes], True
        return b"".join(chunks), False

    @staticmethod
    def _where(request: PreparedRequest) -> dict[str, str]:
        parts = httpx.URL(request.url)
        return {
            "tool": request.tool,
            "method": request.method,
            "host": parts.host,
            "path": parts.path,
        }

    @staticmethod
    def _describe(verb: str, request: PreparedRequest, exc: Exception) -> str:
        parts = httpx.URL(request.url)
        detail = type(exc).__name__
        message = f"{request.method} {parts.scheme}://{parts.netloc.decode()}{parts.path} {verb}"
        message = f"{message} ({detail})"
        for secret in request.secret_values:
            message = message.replace(secret, "***")
        return message


def _query_params(request: PreparedRequest) -> list[tuple[str, str | int | float | bool | None]]:
    return list(request.query)


def _decode(content: bytes, content_type: str, truncated: bool) -> Any:
    text = content.decode("utf-8", errors="replace")
    if "json" in content_type.lower() and not truncated:
        try:
            return loads_json(text, MAX_RESPONSE_DEPTH)
        except (json.JSONDecodeError, TooDeep):  # not JSON, or nested past what is shown
            return text
    return text


__all__ = ["HttpResult", "HttpSender", "TargetRefusedError"]
