"""Per-session configuration by headers: an OpenAPI API, workflows and guides by URL, hints."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import pytest
from fastapi import FastAPI, Header
from mcp.shared.exceptions import MCPError

from tests.support.mcp_client import mcp_client
from tests.support.servers import serve

SECRET = "team-token-8d41c2"
FLOWS = """\
domain: team_flows
workflows:
  cheapest_flight:
    description: Search flights and return the cheapest one
    params:
      origin: {type: str, required: true}
      destination: {type: str, required: true}
      date: {type: str, required: true, format: date}
    graph:
      search:
        call: search_flights
        args: {origin: $origin, destination: $destination, date: $date}
        output: flights
    outputs:
      cheapest: $flights.0.id
"""


def team_api() -> FastAPI:
    """A small API of another team, with its OpenAPI document at /openapi.json."""
    app = FastAPI(title="Inventory")

    @app.get("/items/{item_id}", operation_id="get_item", summary="Get one item by id")
    async def get_item(
        item_id: int, authorization: Annotated[str | None, Header()] = None
    ) -> dict[str, object]:
        return {"id": item_id, "name": f"item {item_id}", "authorized": authorization == SECRET}

    @app.get("/items", operation_id="list_items", summary="List every item")
    async def list_items() -> list[dict[str, object]]:
        return [{"id": 1, "name": "item 1"}, {"id": 2, "name": "item 2"}]

    return app


@pytest.fixture
def team() -> Iterator[str]:
    with serve(team_api()) as url:
        yield url


@pytest.fixture
def gateway(start_server: Callable[..., str], team: str) -> str:
    """Our server, allowed to reach the team API (a loopback host must be listed)."""
    return start_server(allowed_target_hosts=[team.removeprefix("http://")])


async def test_an_openapi_document_becomes_the_session_tools(gateway: str, team: str) -> None:
    headers = {
        "X-Target-URL": f"{team}/openapi.json",
        "X-API-Type": "rest",
        "X-API-Name": "inventory",
        "X-Target-Headers": json.dumps({"Authorization": SECRET}),
    }
    async with mcp_client(gateway, headers=headers) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"get_item", "list_items", "inventory_query", "inventory_execute"} <= set(tools)
        assert "search_flights" not in tools  # the registry is not this session's API
        assert tools["get_item"].annotations.read_only_hint is True  # type: ignore[union-attr]
        item = await client.call_tool("get_item", {"item_id": 7})
        with pytest.raises(MCPError):
            await client.call_tool("search_flights", {"origin": "AMS"})
    assert not item.is_error, item.content
    assert item.structured_content == {"id": 7, "name": "item 7", "authorized": True}
    assert SECRET not in json.dumps(item.model_dump(mode="json"))


async def test_a_target_url_outside_the_allow_list_is_refused(
    start_server: Callable[..., str], team: str
) -> None:
    url = start_server()  # the team API's loopback host is not allowed here
    async with mcp_client(url, headers={"X-Target-URL": f"{team}/openapi.json"}) as client:
        with pytest.raises(MCPError) as refused:
            await client.list_tools()
    assert "x-target-url" in json.dumps(refused.value.data).lower()


async def test_a_workflow_document_by_url_gives_the_session_workflows(
    server: str, travel_root: Path
) -> None:
    (travel_root / "team_flows.yaml").write_text(FLOWS)
    headers = {"X-Workflow-URL": f"file://{travel_root / 'team_flows.yaml'}"}
    async with mcp_client(server, headers=headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "w_cheapest_flight" in names and "w_book_flight" not in names
        result = await client.call_tool(
            "w_cheapest_flight", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        )
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert not result.is_error, result.content
    assert result.structured_content["result"]["cheapest"] == "FL-AMSBCN-20261201-1"
    assert "workflow://team_flows/cheapest_flight" in resources


async def test_a_workflow_file_outside_the_registry_is_refused(server: str, tmp_path: Path) -> None:
    """Not read, and reported: the session is served without its workflows."""
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(FLOWS)
    async with mcp_client(server, headers={"X-Workflow-URL": f"file://{outside}"}) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        problems = await client.read_resource("dynamic-tools://session/problems")
    assert "w_cheapest_flight" not in names and "search_flights" in names
    [problem] = json.loads(problems.contents[0].text)
    assert problem["header"] == "X-Workflow-URL" and problem["workflow"] == "(document)"
    assert problem["violations"][0]["path"] == "header:x-workflow-url"


async def test_workflow_resources_are_guides_not_tools(server: str, travel_root: Path) -> None:
    (travel_root / "guide.yaml").write_text(FLOWS.replace("team_flows", "team_guide"))
    headers = {"X-Workflow-Resources": f"file://{travel_root / 'guide.yaml'}"}
    async with mcp_client(server, headers=headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        guide = await client.read_resource("workflow://team_guide/overview")
    assert "w_cheapest_flight" not in names and "w_book_flight" in names
    assert "Search flights and return the cheapest one" in guide.contents[0].text


async def test_tool_hints_by_header_change_descriptions(server: str) -> None:
    hints = {"search_flights": {"category": "discovery", "hint": "Start here."}}
    async with mcp_client(server, headers={"X-Tool-Hints": json.dumps(hints)}) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    description = tools["search_flights"].description or ""
    assert "├─ Category: discovery" in description
    assert "└─ Hint: Start here." in description
    assert "Next: check_availability" in description  # the registry's other hints stay


async def test_bad_tool_hints_name_the_field(server: str) -> None:
    bad = {"search_flights": {"category": 3}, "teleport": {"hint": "x"}}
    async with mcp_client(server, headers={"X-Tool-Hints": json.dumps(bad)}) as client:
        with pytest.raises(MCPError) as refused:
            await client.list_tools()
    text = json.dumps(refused.value.data)
    assert "category" in text


async def test_hints_on_the_query_tool_with_examples_as_in_the_seed(server: str) -> None:
    hints = {
        "travel_query": {
            "category": "search",
            "hint": "Use for any question about flights or hotels.",
            "examples": ["Flights from AMS to BCN tomorrow", "Hotels in Lisbon"],
        }
    }
    headers = {"X-API-Name": "travel", "X-Tool-Hints": json.dumps(hints)}
    async with mcp_client(server, headers=headers) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    description = tools["travel_query"].description or ""
    assert "├─ Category: search" in description
    assert '└─ Examples: "Flights from AMS to BCN tomorrow", "Hotels in Lisbon"' in description
