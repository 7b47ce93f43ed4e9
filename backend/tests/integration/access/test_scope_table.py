"""Nothing is reachable without a declared scope: every route of the app and every MCP tool,
resource and prompt a fully loaded server offers has its entry in ``access/policy.py``.

Routes are taken from the served OpenAPI document and FastAPI's own pages; MCP tools from a
session view of a server with every layer on (API tools, core tools, the planner, recipes,
workflows, authoring, tasks, catalogs, listings, markdown). API operations, ``w_*`` workflows
and ``r_*`` recipes are families (their names come from the user's documents); every other
tool must be named in the table. The same listing is then checked as both protocol revisions'
clients see it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dynamic_tools.access.policy import (
    MCP_METHOD_SCOPES,
    MCP_TOOL_SCOPES,
    UnknownAction,
    route_scope,
)
from dynamic_tools.api.app import create_app
from dynamic_tools.mcp.session_config import SessionConfig
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.mcp_client import LEGACY, MODERN, mcp_client
from tests.support.servers import serve

#: tool layers whose names are the user's (operations, workflows, recipes, core tools)
FAMILIES = {"api", "core", "planner", "workflow", "recipe"}
FASTAPI_PAGES = ["GET /openapi.json", "GET /docs", "GET /docs/oauth2-redirect", "GET /redoc"]


def settings(tmp_path: Path, make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(
        registry_config_path=tmp_path / "everything" / "config.yaml",
        seed_examples_from=EXAMPLES,
        enable_demo_api=True,
    )


async def test_every_route_has_a_declared_scope(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    app = create_app(settings(tmp_path, make_settings))
    async with app_client(app) as client:
        document = (await client.get("/openapi.json")).json()
    routes = [
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(routes) > 60 and "POST /keys" in routes and "GET /audit" in routes
    missing = []
    for route in [*routes, *FASTAPI_PAGES]:
        method, path = route.split(" ", 1)
        try:
            route_scope(method, path)
        except UnknownAction:
            missing.append(route)
    assert missing == []


async def test_every_mcp_tool_resource_and_prompt_has_a_declared_scope(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    served = settings(tmp_path, make_settings)
    app = create_app(served)
    async with app_client(app) as client:
        await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        view = await app.state.mcp.endpoint.surface.view(SessionConfig())
    layers = {entry.layer for entry in view.entries.values()}
    assert {"api", "core", "workflow", "authoring", "task", "catalog", "markdown"} <= layers
    undeclared = [
        name
        for name, entry in view.entries.items()
        if entry.layer not in FAMILIES and name not in MCP_TOOL_SCOPES
    ]
    assert undeclared == []
    named = set(MCP_TOOL_SCOPES)
    assert named <= set(view.entries), (
        f"the table names tools nobody serves: {named - set(view.entries)}"
    )
    assert set(MCP_METHOD_SCOPES) == {
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tasks/cancel",
        "tasks/update",
    }
    with serve(create_app(served), port=served.port) as url:
        for mode in (MODERN, LEGACY):
            async with mcp_client(url, mode=mode) as mcp:
                listed = {t.name for t in (await mcp.list_tools()).tools}
                resources = (await mcp.list_resources()).resources
                prompts = (await mcp.list_prompts()).prompts
            assert listed == set(view.entries), mode
            # resources and prompts are read as a whole: one scope each (policy.py)
            assert resources and prompts
