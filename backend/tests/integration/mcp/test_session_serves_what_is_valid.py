"""A session serves everything that is valid (docs/design-sources.md#tool-discovery-design):
an invalid workflow, a workflow that calls one, a document that cannot be read, a hint for a
tool the session does not have — each is left out, reported once in
dynamic-tools://session/problems and as a warning, and never fails another tool, tools/list
or resources/list. Proved with the designs' own session setups, verbatim: the orchestration
plan's full specification example by X-Workflow-URL over HTTP with X-Target-URL at the travel
API's OpenAPI document, and the tool discovery design's X-Tool-Hints on a GraphQL target."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import mcp_types as types
import pytest
from loguru import logger

from dynamic_tools import bootstrap
from tests.conftest import FIXTURES
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.graphql_api import GraphQLApi, running_graphql_api
from tests.support.mcp_client import mcp_client
from tests.support.team_api import TeamApi, running_team_api

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
SEED001 = (FIXTURES / "workflows" / "seeds" / "seed001_full.yaml").read_text()
SEED000 = json.loads((FIXTURES / "sessions" / "seed000_tool_hints.json").read_text())
VALID = {"check_flight_status", "book_flight", "find_cheapest_across_dates"}
INVALID = {"book_trip", "book_with_approval"}
CALLER = """\
  plan_and_book:
    description: "Books with approval (a workflow left out), so it is left out too"
    params:
      origin: { type: str, required: true }
    graph:
      approve:
        workflow: book_with_approval
        args: { origin: $origin, destination: BCN, date: "2026-12-01" }
"""


@pytest.fixture
def travel() -> Iterator[TeamApi]:
    """The travel API (public) serving the full specification example and one caller more."""
    documents = {"workflows.yaml": SEED001, "with_caller.yaml": SEED001 + "\n" + CALLER}
    with running_team_api(documents, token=None) as api:
        yield api


@pytest.fixture
def warnings() -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """Capture the server's warning log lines (loguru, with their bound fields) from the call
    on: after the server started, which configures logging anew."""
    records: list[dict[str, Any]] = []
    sinks: list[int] = []

    def sink(message: Any) -> None:
        record = message.record
        records.append({"message": record["message"], **record["extra"]})

    def capture() -> list[dict[str, Any]]:
        sinks.append(logger.add(sink, level="WARNING"))
        return records

    yield capture
    for sink_id in sinks:
        with contextlib.suppress(ValueError):  # removed when logging was configured again
            logger.remove(sink_id)


def seed001_session(travel: TeamApi, document: str = "workflows.yaml") -> dict[str, str]:
    """The orchestration plan's client configuration, pointed at the travel API over HTTP.

    Its headers verbatim (X-Target-URL, X-API-Type, X-Workflow-URL) with the loopback URLs,
    REST because the travel API is described by OpenAPI, and X-API-Name ``flights``: the
    name the design gives the server, so the example's ``flights_query`` exists.
    """
    return {
        "X-Target-URL": travel.openapi,
        "X-API-Type": "rest",
        "X-API-Name": "flights",
        "X-Workflow-URL": travel.document(document),
    }


async def read_json(client: Any, uri: str) -> Any:
    result = await client.read_resource(uri)
    return json.loads(result.contents[0].text)


async def test_seed_001_full_spec_serves_and_runs_every_valid_workflow(
    start_server: Callable[..., str],
    travel: TeamApi,
    fake_llm: FakeLLM,
    warnings: Callable[[], list[dict[str, Any]]],
) -> None:
    gateway = start_server(allowed_target_hosts=[travel.host])
    warned = warnings()
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    fake_llm.script(tool_call("check_availability", {"flight_id": "FL-AMSBCN-20261201-1"}))
    headers = seed001_session(travel)
    async with mcp_client(gateway, headers=headers, logging_callback=on_log) as client:
        await client.set_logging_level("warning")
        names = {t.name for t in (await client.list_tools()).tools}
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        problems = await read_json(client, "dynamic-tools://session/problems")
        status = await client.call_tool(
            "w_check_flight_status", {"flight_number": "FL-AMSBCN-20261201-1"}
        )
        booked = await client.call_tool(
            "w_book_flight",
            {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"},
        )
        cheapest = await client.call_tool(
            "w_find_cheapest_across_dates",
            {"origin": "AMS", "destination": "BCN", "start_date": "2026-12-01", "num_days": 3},
        )
        direct = await client.call_tool(
            "search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        )
    assert {f"w_{w}" for w in VALID} <= names
    assert not {f"w_{w}" for w in INVALID} & names
    assert sorted(p["workflow"] for p in problems) == sorted(INVALID)  # each once
    assert {p["header"] for p in problems} == {"X-Workflow-URL"}
    by_workflow = {p["workflow"]: p for p in problems}
    assert "book_hotel" in json.dumps(by_workflow["book_trip"]["violations"])
    assert "dynamic-tools://session/problems" in uris
    assert "workflow://travel_booking/book_flight" in uris
    assert "workflow://travel_booking/book_trip" not in uris
    for result in (status, booked, cheapest):
        assert not result.is_error, result.content
        assert result.structured_content["status"] == "succeeded", result.structured_content
    assert not direct.is_error, direct.content
    logged = [m.data for m in received if m.data.get("event") == "session_documents"]
    assert len(logged) == 1, logged  # the session is told once
    assert sorted(logged[0]["left_out"]) == sorted(f"X-Workflow-URL: {w}" for w in INVALID)
    server_warned = {w.get("workflow") for w in warned if w.get("header") == "X-Workflow-URL"}
    assert server_warned == INVALID


async def test_a_workflow_calling_an_invalid_one_is_left_out_with_it_only(
    start_server: Callable[..., str], travel: TeamApi
) -> None:
    gateway = start_server(allowed_target_hosts=[travel.host])
    headers = seed001_session(travel, "with_caller.yaml")
    async with mcp_client(gateway, headers=headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        problems = await read_json(client, "dynamic-tools://session/problems")
        booked = await client.call_tool(
            "w_book_flight",
            {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"},
        )
    assert {f"w_{w}" for w in VALID} <= names
    assert "w_plan_and_book" not in names
    by_workflow = {p["workflow"]: p for p in problems}
    assert set(by_workflow) == INVALID | {"plan_and_book"}
    caller = by_workflow["plan_and_book"]["violations"]
    assert [v["rule"] for v in caller] == ["sub_workflow_left_out"]
    assert "book_with_approval" in caller[0]["message"]
    assert not booked.is_error, booked.content
    assert booked.structured_content["status"] == "succeeded", booked.structured_content


async def test_documents_that_cannot_be_read_leave_the_rest_served(
    start_server: Callable[..., str],
    travel: TeamApi,
    warnings: Callable[[], list[dict[str, Any]]],
) -> None:
    gateway = start_server(allowed_target_hosts=[travel.host])
    warned = warnings()
    headers = {
        **seed001_session(travel, "missing.yaml"),
        "X-Workflow-Resources": travel.document("no_guide.md"),
    }
    async with mcp_client(gateway, headers=headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        await client.list_resources()
        problems = await read_json(client, "dynamic-tools://session/problems")
        found = await client.call_tool(
            "search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        )
    assert {"search_flights", "flights_query", "flights_plan"} <= names
    assert not any(n.startswith("w_") for n in names)
    assert [(p["header"], p["workflow"]) for p in problems] == [
        ("X-Workflow-URL", "(document)"),
        ("X-Workflow-Resources", "(document)"),
    ]
    assert all(p["violations"][0]["message"] for p in problems)
    assert not found.is_error, found.content
    assert {w["header"] for w in warned if "header" in w} == {
        "X-Workflow-URL",
        "X-Workflow-Resources",
    }


@pytest.fixture
def public_graph() -> Iterator[GraphQLApi]:
    """The GraphQL flights API without a token (the design's configuration sends none)."""
    with running_graphql_api(token=None) as api:
        yield api


async def test_seed_000_tool_hints_on_a_graphql_target_are_advice(
    start_server: Callable[..., str],
    public_graph: GraphQLApi,
    warnings: Callable[[], list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The design's hints name REST-style tools this GraphQL API does not have.

    The documents are checked again on every request here (as they are after a second):
    still one warning and one client message per stale hint.
    """
    monkeypatch.setattr(bootstrap, "SESSION_REFETCH_S", 0.0)
    gateway = start_server(allowed_target_hosts=[public_graph.host])
    warned = warnings()
    configured = SEED000["mcpServers"]["flights"]["headers"]
    hinted = set(configured["X-Tool-Hints"])
    headers = {
        **configured,
        "X-Target-URL": public_graph.endpoint,
        "X-Tool-Hints": json.dumps(configured["X-Tool-Hints"]),
    }
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with mcp_client(gateway, headers=headers, logging_callback=on_log) as client:
        await client.set_logging_level("warning")
        names = {t.name for t in (await client.list_tools()).tools}
        again = {t.name for t in (await client.list_tools()).tools}
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        problems = await read_json(client, "dynamic-tools://session/problems")
        status = await client.call_tool("flightStatus", {"number": "KL1"})
    assert {"flights", "flight", "flightStatus", "createBooking", "api_query"} <= names
    assert names == again
    assert not hinted & names
    assert "dynamic-tools://session/problems" in uris
    assert sorted(p["tool"] for p in problems) == sorted(hinted)  # each once
    assert {p["header"] for p in problems} == {"X-Tool-Hints"}
    assert {v["rule"] for p in problems for v in p["violations"]} == {"unknown_tool"}
    assert not status.is_error, status.content
    logged = [m.data for m in received if m.data.get("event") == "session_documents"]
    assert len(logged) == 1 and sorted(logged[0]["left_out"]) == sorted(
        f"X-Tool-Hints: {name}" for name in hinted
    )
    server_warned = [w.get("tool") for w in warned if w.get("header") == "X-Tool-Hints"]
    assert sorted(server_warned) == sorted(hinted)  # once each, though the view was rebuilt


SEED001_CLIENT = json.loads((FIXTURES / "sessions" / "seed001_workflows.json").read_text())
STATUS = "query Status($n: String!) { flightStatus(number: $n) { number status } }"


async def test_seed_001_client_configuration_on_a_graphql_target(
    start_server: Callable[..., str],
    public_graph: GraphQLApi,
    travel: TeamApi,
    fake_llm: FakeLLM,
) -> None:
    """The orchestration plan's own client configuration: a GraphQL target whose fields are not
    the example's REST operations (the registry's are callable too). Without X-API-Name (as
    configured) ``flights_query`` does not exist; named after its server (``flights``), it does
    and ``check_flight_status`` runs."""
    gateway = start_server(allowed_target_hosts=[public_graph.host, travel.host])
    configured = SEED001_CLIENT["mcpServers"]["flights"]["headers"]
    headers = {
        **configured,
        "X-Target-URL": public_graph.endpoint,
        "X-Workflow-URL": travel.document("workflows.yaml"),
    }
    async with mcp_client(gateway, headers=headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        await client.list_resources()
        problems = await read_json(client, "dynamic-tools://session/problems")
        status = await client.call_tool("flightStatus", {"number": "KL1"})
        booked = await client.call_tool(
            "w_book_flight",
            {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"},
        )
    assert {"flights", "flightStatus", "api_query", "api_execute"} <= names
    served = {n.removeprefix("w_") for n in names if n.startswith("w_")}
    assert served == {"book_flight", "find_cheapest_across_dates"}
    assert sorted(p["workflow"] for p in problems) == sorted(INVALID | {"check_flight_status"})
    assert not status.is_error, status.content
    assert not booked.is_error, booked.content
    assert booked.structured_content["status"] == "succeeded", booked.structured_content

    fake_llm.script(tool_call("flights_graphql", {"query": STATUS, "variables": {"n": "KL7"}}))
    named = {**headers, "X-API-Name": "flights"}
    async with mcp_client(gateway, headers=named) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        problems = await read_json(client, "dynamic-tools://session/problems")
        result = await client.call_tool("w_check_flight_status", {"flight_number": "KL7"})
    assert {f"w_{w}" for w in VALID} <= names
    assert sorted(p["workflow"] for p in problems) == sorted(INVALID)
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded", result.structured_content
