"""Another team's travel API, as the designs' sessions bring one: its OpenAPI document, its
workflow document, and a bearer token it insists on (test code only).

The ten travel operations of the demo (their names become the operation ids), guarded by
``Authorization: Bearer <TOKEN>`` on every operation; ``/openapi.json`` and the documents
under ``/docs/`` are public. ``seen`` records the Authorization header of every operation
call, so a test can prove the session's headers went out (and which).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from fastapi.routing import APIRoute

from dynamic_tools.demo.travel_api import create_travel_router
from tests.support.servers import serve

TOKEN = "Bearer team-secret-4c9e71"


@dataclass
class TeamApi:
    """The running API: its URL, the documents it serves and what it saw."""

    url: str
    documents: dict[str, str]
    seen: list[tuple[str, str | None]] = field(default_factory=list)
    token: str | None = TOKEN  # None: a public API (no Authorization needed)

    @property
    def openapi(self) -> str:
        """The URL of its OpenAPI document (X-Target-URL)."""
        return f"{self.url}/openapi.json"

    def document(self, name: str) -> str:
        """The URL of a document it serves (X-Workflow-URL, X-Workflow-Resources)."""
        return f"{self.url}/docs/{name}"

    @property
    def host(self) -> str:
        """host:port, for ALLOWED_TARGET_HOSTS."""
        return self.url.removeprefix("http://")


def team_app(team: TeamApi) -> FastAPI:
    """The API: the demo's operations behind a bearer token."""
    app = FastAPI(title="Team Travel")
    router = create_travel_router()
    for route in router.routes:
        if isinstance(route, APIRoute):
            route.operation_id = route.name
            if route.name.startswith("travel_"):  # the demo's test controls: not this API's
                route.include_in_schema = False
    app.include_router(router)

    @app.middleware("http")
    async def bearer(request: Request, call_next):  # type: ignore[no-untyped-def]
        path = request.url.path
        if path == "/openapi.json" or path.startswith("/docs/") or path.startswith("/_"):
            response: Response = await call_next(request)
            return response
        given = request.headers.get("authorization")
        team.seen.append((path, given))
        if team.token is not None and given != team.token:
            return JSONResponse({"error": {"code": "unauthorized"}}, status_code=401)
        answered: Response = await call_next(request)
        return answered

    @app.get("/docs/{name}", include_in_schema=False)
    async def document(name: str) -> PlainTextResponse:
        if name not in team.documents:
            return PlainTextResponse("not found", status_code=404)
        return PlainTextResponse(team.documents[name], media_type="text/yaml")

    return app


@contextmanager
def running_team_api(
    documents: dict[str, str] | None = None, *, token: str | None = TOKEN
) -> Iterator[TeamApi]:
    """Serve the team API on loopback until the block ends (``token=None``: public)."""
    team = TeamApi(url="", documents=dict(documents or {}), token=token)
    with serve(team_app(team)) as url:
        team.url = url
        yield team
