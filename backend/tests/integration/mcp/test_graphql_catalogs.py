"""GraphQL catalogs over REST, MCP and the CLI: a schema (SDL or introspection JSON) imported
as a catalog; its root fields become registry tools that call the endpoint for real.

The endpoint here is public: a registry tool calls its API with the server's credentials, and a
GraphQL catalog carries none (a session's X-Target-Headers never go to a registry tool)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from dynamic_tools.cli.main import app
from tests.support.graphql_api import SDL, GraphQLApi, running_graphql_api
from tests.support.mcp_client import mcp_client


@pytest.fixture
def graph() -> Iterator[GraphQLApi]:
    """The flights GraphQL API, served without a token."""
    with running_graphql_api(token=None) as api:
        yield api


async def test_a_schema_imported_over_rest_gives_callable_tools(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    missing = httpx.post(
        f"{graph_gateway}/catalogs", json={"source": graph.schema_url, "name": "air"}, timeout=30
    )
    created = httpx.post(
        f"{graph_gateway}/catalogs",
        json={
            "source": graph.schema_url,
            "name": "air",
            "base_url": graph.endpoint,
            "prefix": "air",
        },
        timeout=30,
    )
    assert missing.status_code == 422, missing.text
    assert "base_url" in missing.text and "endpoint" in missing.text
    assert created.status_code == 201, created.text
    assert created.json()["command_count"] == 4
    tool = httpx.get(f"{graph_gateway}/tools/air_flight", timeout=10).json()
    assert tool["graphql"]["document"].startswith("query Flight($id: ID!)")
    async with mcp_client(graph_gateway) as client:
        result = await client.call_tool("air_flight", {"id": "FL-2"})
        error = await client.call_tool("air_flight", {"id": "FL-9"})
    assert result.structured_content["data"]["flight"]["airline"] == "Vueling"
    assert error.is_error and "Flight FL-9 not found (at flight)" in error.content[0].text


async def test_a_schema_imported_over_mcp(graph_gateway: str, graph: GraphQLApi) -> None:
    async with mcp_client(graph_gateway) as client:
        checked = await client.call_tool(
            "catalog.validate_openapi", {"source": graph.schema_url, "base_url": graph.endpoint}
        )
        imported = await client.call_tool(
            "catalog.import_openapi",
            {
                "source": graph.schema_url,
                "catalog": "skies",
                "base_url": graph.endpoint,
                "include": ["flightStatus"],
            },
        )
        await client.list_tools()  # the registry changed: a new view
        status = await client.call_tool("flightStatus", {"number": "KL9"})
    assert checked.structured_content["document_kind"] == "graphql"
    assert checked.structured_content["tool_count"] == 4
    assert imported.structured_content["command_count"] == 1, imported.content
    assert status.structured_content["data"]["flightStatus"]["status"] == "ON_TIME"


def test_the_cli_imports_a_schema_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "registry"
    (root / "tools").mkdir(parents=True)
    (root / "config.yaml").write_text("tools_dir: tools\n")
    (tmp_path / "flights.graphql").write_text(SDL)
    monkeypatch.setenv("REGISTRY_CONFIG_PATH", str(root / "config.yaml"))
    runner = CliRunner()
    done = runner.invoke(
        app,
        [
            "import-graphql",
            str(tmp_path / "flights.graphql"),
            "--catalog",
            "flights",
            "--endpoint",
            "https://flights.example.com/graphql",
            "--json",
        ],
    )
    broken = runner.invoke(
        app,
        [
            "import-graphql",
            str(tmp_path / "flights.graphql"),
            "--catalog",
            "x",
            "--endpoint",
            "https://x.example.com/graphql",
            "--include",
            "nope",
        ],
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["command_count"] == 4
    manifest = json.loads((root / "catalogs" / "flights.tools.json").read_text())
    mutation = next(t for t in manifest if t["name"] == "createBooking")
    assert mutation["api"] == {
        "method": "POST",
        "base_url": "https://flights.example.com",
        "path": "/graphql",
    }
    assert mutation["graphql"]["document"].startswith("mutation CreateBooking(")
    assert broken.exit_code == 1 and "'nope' is not a root field" in broken.output
