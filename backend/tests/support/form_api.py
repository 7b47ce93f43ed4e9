"""An API that takes form and multipart bodies, recording each request's raw bytes.

- ``POST /oauth/token``: an OAuth client_credentials token endpoint (a form body). It answers
  an access token when ``client_id``/``client_secret`` match, and echoes the form it got (the
  client secret included) — as a careless API would.
- ``GET /me``: answers 200 only with ``Authorization: Bearer <the token it issued>``.
- ``POST /upload``: a multipart upload; answers the parts it read (name, filename, type, size)
  and the raw body's text.

Every request is recorded (method, path, Content-Type, headers, raw body) in :attr:`FormApi.seen`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

CLIENT_ID = "dt-client"
CLIENT_SECRET = "cs-4d1f9a7be2c85310"
ACCESS_TOKEN = "at-8e21c0d94fab"


@dataclass(frozen=True)
class Seen:
    """One request as it arrived."""

    method: str
    path: str
    content_type: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FormApi:
    """The app and what it has seen."""

    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def _record(self, request: Request) -> bytes:
        body = await request.body()
        with self.lock:
            self.seen.append(
                Seen(
                    request.method,
                    request.url.path,
                    request.headers.get("content-type", ""),
                    dict(request.headers),
                    body,
                )
            )
        return body

    def requests(self, path: str) -> list[Seen]:
        """The requests made to ``path``, in order."""
        with self.lock:
            return [s for s in self.seen if s.path == path]

    async def token(self, request: Request) -> JSONResponse:
        body = await self._record(request)
        form = dict(parse_qsl(body.decode()))
        if (form.get("client_id"), form.get("client_secret")) != (CLIENT_ID, CLIENT_SECRET):
            return JSONResponse({"error": "invalid_client", "got": body.decode()}, 401)
        return JSONResponse(
            {
                "access_token": ACCESS_TOKEN,
                "token_type": "Bearer",
                "expires_in": 3600,
                "scope": form.get("scope"),
                "you_sent": body.decode(),  # echoes the client secret
            }
        )

    async def me(self, request: Request) -> JSONResponse:
        await self._record(request)
        if request.headers.get("authorization") != f"Bearer {ACCESS_TOKEN}":
            return JSONResponse({"error": "unauthorized"}, 401)
        return JSONResponse({"user": "robot", "client_id": CLIENT_ID})

    async def upload(self, request: Request) -> JSONResponse:
        await self._record(request)
        parts: list[dict[str, Any]] = []
        async with request.form() as form:
            for name, value in form.multi_items():
                if isinstance(value, UploadFile):
                    content = await value.read()
                    parts.append(
                        {
                            "name": name,
                            "filename": value.filename,
                            "content_type": value.content_type,
                            "text": content.decode("utf-8", "replace"),
                        }
                    )
                else:
                    parts.append({"name": name, "value": value})
        return JSONResponse({"parts": parts})

    def app(self) -> Starlette:
        """The Starlette app serving the three routes."""
        return Starlette(
            routes=[
                Route("/oauth/token", self.token, methods=["POST"]),
                Route("/me", self.me, methods=["GET"]),
                Route("/upload", self.upload, methods=["POST"]),
            ]
        )
