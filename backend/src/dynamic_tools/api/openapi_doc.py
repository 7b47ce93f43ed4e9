"""What the OpenAPI document adds to FastAPI's: ``API_TOKEN`` and the run events' schema.

When the server has a token, every operation but the open ones (health, the demo API; see
``api/edge.py``) requires ``Authorization: Bearer <API_TOKEN>`` and answers 401 without it. The
document says so, so clients and generated tests know which operations need the token.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dynamic_tools.api.edge import OPEN_PATHS, OPEN_PREFIXES
from dynamic_tools.api.run_models import run_event_schema

SCHEME = "apiToken"


def complete_document(app: FastAPI, *, token: bool) -> None:
    """Complete ``app``'s document: the run events' schema, and the token where needed.

    With ``token``, every operation that needs it declares the bearer scheme and its 401.
    """

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            if token:
                _add_token(document)
            _add_run_events(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _add_run_events(document: dict[str, Any]) -> None:
    """The stream of ``GET /runs/{run_id}/events``: each ``data:`` line is one ``RunEvent``."""
    schema = run_event_schema()
    components = document.setdefault("components", {}).setdefault("schemas", {})
    components.update(schema.pop("$defs", {}))
    components["RunEvent"] = {
        **schema,
        "description": "One run event as streamed (each SSE data line), one of the engine's "
        "event classes, told apart by type.",
    }
    operation = document.get("paths", {}).get("/runs/{run_id}/events", {}).get("get")
    if operation is not None:
        operation["responses"]["200"]["content"]["text/event-stream"] = {
            "schema": {"$ref": "#/components/schemas/RunEvent"}
        }


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
