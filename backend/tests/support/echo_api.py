"""An API that echoes every request back, credentials included, in the forms APIs use.

A 400 answer repeats the request's headers and query string as they came, URL-encoded, in
base64 (standard and URL-safe, at odd offsets), in its own header and, for GraphQL, in
``errors``. With it, a test checks that no credential a call carried reaches anything recorded
or shown.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.conftest import FIXTURES


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


ECHO = FIXTURES / "echo"
GOOD = "good-secret-value-5c1"
BASIC = "basic-password-77e9"
QUERY = "query-key-value-31ab"
SESSION = "session-header-value-9f2"
BASIC_TOKEN = base64.b64encode(f"alice:{BASIC}".encode()).decode()
VALUES = (GOOD, BASIC, QUERY, SESSION, BASIC_TOKEN)


def forms(value: str) -> set[str]:
    """How an echoing API shows ``value``: as is, URL-encoded, base64 at any offset."""
    found = {value, quote(value, safe=""), quote_plus(value)}
    raw = value.encode()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        part = encoded[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6]
        found |= {part, part.replace("+", "-").replace("/", "_")}
    return found


FORMS = sorted({f for v in VALUES for f in forms(v)}, key=len, reverse=True)


def leaks(text: str | bytes) -> list[str]:
    """The forms of any credential found in ``text``."""
    data = text.encode() if isinstance(text, str) else text
    return [f for f in FORMS if f.encode() in data]


def echo_registry(tmp: Path, echo: str) -> Path:
    """A registry root with the echo tools and workflows, and ``tmp/secrets`` holding their
    secrets (give it as ``SECRETS_DIR``)."""
    root = tmp / "registry"
    (root / "tools").mkdir(parents=True)
    (root / "workflows").mkdir()
    (root / "tools" / "echo.yaml").write_text(
        (ECHO / "tools.yaml").read_text().replace("ECHO_URL", echo)
    )
    shutil.copy(ECHO / "echo_flows.yaml", root / "workflows")
    shutil.copy(ECHO / "session_flows.yaml", root / "session_flows.yaml")
    secrets = tmp / "secrets"
    secrets.mkdir()
    for name, value in {"GOOD": GOOD, "BASIC": BASIC, "QUERY": QUERY}.items():
        (secrets / name).write_text(value)
    return root
