"""The OpenAPI document's account of ``API_TOKEN``: a bearer scheme and its 401 answers.

When the server has a token, every operation but the open ones (health, the demo API; see
``api/edge.py``) requires ``Authorization: Bearer <API_TOKEN>`` and answers 401 without it. The
document says so, so clients and generated tests know which operations need the token.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dynamic_tools.api.edge import OPEN_PATHS, OPEN_PREFIXES

SCHEME = "apiToken"


def document_api_token(app: FastAPI) -> None:
    """Make ``app``'s document declare the bearer token on every operation that needs it."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _add_token(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _add_token(document: dict[str, Any]) -> None:
    components = document.setdefault("components", {})
    components.setdefault("securitySchemes", {})[SCHEME] = {
        "type": "http",
        "scheme": "bearer",
        "description": "The server's API_TOKEN.",
    }
    unauthorized = {  # ErrorBody is in the components: the routes' error answers use it
        "description": "A valid 'Authorization: Bearer <API_TOKEN>' header is required",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    for path, item in document.get("paths", {}).items():
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            continue
        for operation in item.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["security"] = [{SCHEME: []}]
                operation["responses"].setdefault("401", unauthorized)
