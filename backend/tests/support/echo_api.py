"""An API that echoes every request back, credentials included, in the forms APIs use.

A 400 answer repeats the request's headers and query string as they came, URL-encoded, in
base64 (standard and URL-safe, at odd offsets), in its own header and, for GraphQL, in
``errors``. With it, a test checks that no credential a call carried reaches anything recorded
or shown.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


def _dump(request: Request) -> str:
    lines = [f"{k}: {v}" for k, v in request.headers.items()]
    lines.append(f"query: {request.url.query}")
    return "\n".join(lines)


def echo_app() -> FastAPI:
    """The echo API: ``GET /echo`` (400), ``POST /graphql`` (errors), ``/openapi.json``."""
    app = FastAPI(openapi_url=None)

    @app.get("/echo")
    async def echo(request: Request) -> JSONResponse:
        dump = _dump(request)
        credentials = " ".join(
            v for k, v in request.headers.items() if k in ("authorization", "x-session-token")
        )
        body: dict[str, Any] = {
            "error": f"refused: {credentials} (query {request.url.query})",
            "headers": dict(request.headers),
            "url_encoded": quote(dump, safe=""),
            "base64": base64.b64encode(("x" + dump).encode()).decode(),
            "urlsafe_base64": base64.urlsafe_b64encode(("yz" + dump).encode()).decode(),
        }
        return JSONResponse(body, status_code=400, headers={"X-Echo": credentials or "none"})

    @app.post("/graphql")
    async def graphql(request: Request) -> dict[str, Any]:
        token = request.headers.get("authorization", "")
        return {"data": None, "errors": [{"message": f"denied for {token}", "path": ["echo"]}]}

    @app.get("/openapi.json")
    async def spec(request: Request) -> dict[str, Any]:
        base = str(request.base_url).rstrip("/")
        return {
            "openapi": "3.0.3",
            "info": {"title": "Echo", "version": "1"},
            "servers": [{"url": base}],
            "paths": {
                "/echo": {
                    "get": {
                        "operationId": "echo",
                        "summary": "Echo the request",
                        "responses": {"200": {"description": "never"}},
                    }
                }
            },
        }

    return app
