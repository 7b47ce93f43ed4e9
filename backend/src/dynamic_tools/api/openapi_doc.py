"""What the OpenAPI document adds to FastAPI's: access control and the run events' schema.

Every operation but the open ones (health, the protected-resource metadata, the UI; see
``api/edge.py``) may answer 401 (no or a bad credential, once access control is on) and 403 (a
credential without the scope the operation needs, ``access/policy.py``): both are documented.
When the server starts with a credential configured (``API_TOKEN`` or an issuer), the bearer
scheme is declared on those operations too, so clients and generated tests send it.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dynamic_tools.api.edge import OPEN_PATHS, OPEN_PREFIXES
from dynamic_tools.api.run_models import run_event_schema

SCHEME = "apiToken"


def complete_document(app: FastAPI, *, token: bool) -> None:
    """Complete ``app``'s document: the run events' schema, 401 and 403 where they may come.

    With ``token`` (a credential configured at start), those operations declare the bearer
    scheme as well.
    """

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _add_access(document, declare_scheme=token)
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


def _add_access(document: dict[str, Any], *, declare_scheme: bool) -> None:
    components = document.setdefault("components", {})
    if declare_scheme:
        components.setdefault("securitySchemes", {})[SCHEME] = {
            "type": "http",
            "scheme": "bearer",
            "description": "API_TOKEN, an API key (dtk_…) or an OAuth access token.",
        }
    error = {"$ref": "#/components/schemas/ErrorBody"}  # the routes' error answers use it
    unauthorized = {
        "description": "A credential is required ('Authorization: Bearer <token>'), or the "
        "one given is not valid",
        "content": {"application/json": {"schema": error}},
    }
    forbidden = {
        "description": "The credential lacks the scope this operation needs",
        "content": {"application/json": {"schema": error}},
    }
    for path, item in document.get("paths", {}).items():
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            continue
        for operation in item.values():
            if isinstance(operation, dict) and "responses" in operation:
                if declare_scheme:
                    operation["security"] = [{SCHEME: []}]
                operation["responses"].setdefault("401", unauthorized)
                operation["responses"].setdefault("403", forbidden)
