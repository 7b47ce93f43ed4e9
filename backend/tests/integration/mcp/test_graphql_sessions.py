"""GraphQL targets (X-API-Type: graphql, as the designs configure it) against a real
GraphQL server on loopback: the schema by introspection or SDL, root fields as tools, queries
parsed and validated before they are sent, GraphQL errors reported with their paths, mutations
refused to the model unless the session allows them, and workflows over it all."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_llm import FakeLLM, answer, tool_call
from tests.support.graphql_api import TOKEN, GraphQLApi
from tests.support.mcp_client import mcp_client

STATUS = "query Status($n: String!) { flightStatus(number: $n) { number status } }"
FLOWS = """\
domain: flights
workflows:
  check_flight_status:
    description: Check the status of a flight (the orchestration plan's, over a GraphQL API)
    params:
      flight_number: {type: str, required: true}
    graph:
      lookup:
        call: flights_query
        args:
          question: "Get status for flight $flight_number"
          sql: "SELECT number, status FROM result"
        output: status
      again:
        call: flightStatus
        depends_on: [lookup]
        args: {number: $flight_number}
        output: by_field
      direct:
        call: flights_execute
        depends_on: [again]
        args:
          query: "query S($$n: String!) { flightStatus(number: $$n) { status } }"
          variables: {n: $flight_number}
        output: by_query
    outputs:
      llm: $status.0.status
      field: $by_field.data.flightStatus.status
      query: $by_query.data.flightStatus.status
"""


def session(graph: GraphQLApi, **extra: str) -> dict[str, str]:
    return {
        "X-Target-URL": graph.endpoint,
        "X-API-Type": "graphql",
        "X-API-Name": "flights",
        "X-Target-Headers": json.dumps({"Authorization": TOKEN}),
        **extra,
    }


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content
    return json.loads(result.content[0].text.split(": ", 1)[1].split("\n", 1)[1])


async def test_root_fields_become_tools_and_errors_keep_their_paths(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    async with mcp_client(graph_gateway, headers=session(graph)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("flight", {"id": "FL-1"})
        missing = await client.call_tool("flight", {"id": "FL-404"})
    assert {"flights", "flight", "flightStatus", "createBooking"} <= set(tools)
    assert {"flights_query", "flights_execute", "flights_plan"} <= set(tools)
    assert tools["flight"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["createBooking"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["flight"].input_schema["required"] == ["id"]
    assert not found.is_error, found.content
    assert found.structured_content["data"]["flight"]["airline"] == "KLM"
    assert missing.is_error
    assert "Flight FL-404 not found (at flight)" in missing.content[0].text
    assert all(auth == TOKEN for _, auth in graph.seen)  # introspection and calls alike


async def test_execute_validates_the_query_before_sending_it(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    async with mcp_client(graph_gateway, headers=session(graph)) as client:
        good = await client.call_tool(
            "flights_execute", {"query": STATUS, "variables": {"n": "KL1234"}}
        )
        sent = len(graph.seen)
        bad = await client.call_tool("flights_execute", {"query": "{ flightz { id } }"})
        broken = await client.call_tool("flights_execute", {"query": "{ flight(id: "})
    assert good.structured_content["data"]["flightStatus"]["status"] == "ON_TIME"
    assert bad.is_error and broken.is_error
    assert "Cannot query field 'flightz'" in bad.content[0].text
    assert "(line 1, column 3)" in bad.content[0].text
    assert "does not parse" in broken.content[0].text
    assert len(graph.seen) == sent  # neither was sent


async def test_query_has_the_llm_write_a_checked_query(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        tool_call("flights_graphql", {"query": "{ flightStatus { status } }"}),  # invalid
        tool_call("flights_graphql", {"query": STATUS, "variables": {"n": "KL1234"}}),
        answer("KL1234 is on time"),
    )
    async with mcp_client(graph_gateway, headers=session(graph)) as client:
        result = await client.call_tool("flights_query", {"question": "Status of KL1234?"})
    assert not result.is_error, result.content
    assert result.structured_content["raw_response"]["body"]["data"]["flightStatus"] == {
        "number": "KL1234",
        "status": "ON_TIME",
    }
    first, second, _ = fake_llm.requests  # the invalid call, the valid one, the answer
    assert result.structured_content["answer"] == "KL1234 is on time"
    assert [s["status"] for s in result.structured_content["steps"]] == ["invalid", "ok"]
    assert "flightStatus(number: String!): FlightStatus" in json.dumps(first)  # the schema
    feedback = second["messages"][-1]["content"]  # GraphQL's own words, with the place
    assert "'Query.flightStatus(number:)' of type 'String!' is required" in feedback
    assert "(line 1, column 3)" in feedback
    assert TOKEN not in json.dumps(fake_llm.requests)
    assert [q for q, _ in graph.seen if "flightStatus" in q] == [STATUS]  # only the valid one


async def test_the_model_cannot_mutate_unless_the_session_allows_it(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    mutation = 'mutation { createBooking(flightId: "FL-1", passenger: "Ada") { id } }'
    fake_llm.script(*[tool_call("flights_graphql", {"query": mutation})] * 3)
    async with mcp_client(graph_gateway, headers=session(graph)) as client:
        refused = await client.call_tool("flights_query", {"question": "Book FL-1 for Ada"})
    assert refused.is_error and "X-Allow-Unsafe-Paths must match one of: 'createBooking'" in str(
        refused.content[0].text
    )
    assert graph.bookings == []

    fake_llm.reset()
    fake_llm.script(tool_call("flights_graphql", {"query": mutation}))
    allowed = session(graph, **{"X-Allow-Unsafe-Paths": '["createBooking"]'})
    async with mcp_client(graph_gateway, headers=allowed) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        booked = await client.call_tool("flights_query", {"question": "Book FL-1 for Ada"})
    assert not booked.is_error, booked.content
    assert [b["passenger"] for b in graph.bookings] == ["Ada"]
    assert tools["flights_query"].annotations.read_only_hint is False  # type: ignore[union-attr]


async def test_a_schema_file_replaces_introspection(graph_gateway: str, graph: GraphQLApi) -> None:
    headers = session(graph, **{"X-Schema-URL": graph.schema_url})
    async with mcp_client(graph_gateway, headers=headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("flightStatus", {"number": "KL1"})
    assert {"flights", "createBooking"} <= names
    assert result.structured_content["data"]["flightStatus"]["status"] == "ON_TIME"
    assert not any("__schema" in q for q, _ in graph.seen)  # no introspection was sent


async def test_a_workflow_calls_the_graphql_core_tools_and_fields(
    graph_gateway: str, graph: GraphQLApi, travel_root: Path, fake_llm: FakeLLM
) -> None:
    """The designs' GraphQL setup: X-API-Type graphql, X-Workflow-URL, hints on the query tool."""
    (travel_root / "graph_flows.yaml").write_text(FLOWS)
    fake_llm.script(tool_call("flights_graphql", {"query": STATUS, "variables": {"n": "KL7"}}))
    hints = {
        "flights_query": {
            "category": "search",
            "hint": "Use for any question about flights, their status or their seats.",
            "examples": ["What is the status of KL7?"],
        }
    }
    headers = session(
        graph,
        **{
            "X-Workflow-URL": f"file://{travel_root / 'graph_flows.yaml'}",
            "X-Tool-Hints": json.dumps(hints),
        },
    )
    async with mcp_client(graph_gateway, headers=headers) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("w_check_flight_status", {"flight_number": "KL7"})
    assert "What is the status of KL7?" in str(tools["flights_query"].description)
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded", result.structured_content
    assert result.structured_content["result"] == {
        "llm": "ON_TIME",
        "field": "ON_TIME",
        "query": "ON_TIME",
    }


async def test_graphql_headers_are_checked(start_server: Callable[..., str]) -> None:
    url = start_server()
    async with mcp_client(url, headers={"X-API-Type": "graphql"}) as client:
        with pytest.raises(Exception) as refused:
            await client.list_tools()
    assert "x-target-url" in str(getattr(refused.value, "data", refused.value)).lower()


async def test_query_post_processes_rows_with_sql(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    listing = (
        '{ flights(origin: "AMS", destination: "BCN", date: "2026-12-01") '
        "{ airline price seatsAvailable } }"
    )
    fake_llm.script(tool_call("flights_graphql", {"query": listing}))
    sql = "SELECT airline, price FROM result WHERE seatsAvailable > 0 ORDER BY price"
    async with mcp_client(graph_gateway, headers=session(graph)) as client:
        result = await client.call_tool(
            "flights_query", {"question": "Bookable flights AMS-BCN?", "sql": sql}
        )
        bad = await client.call_tool("flights_query", {"question": "x", "sql": ""})
    assert not result.is_error, result.content
    assert result.structured_content["sql"] == {
        "query": sql,
        "table_rows": 2,
        "rows": [{"airline": "KLM", "price": 120.0}],
    }
    assert json.loads(result.content[0].text) == [{"airline": "KLM", "price": 120.0}]
    assert bad.is_error and '"path": "sql"' in bad.content[0].text
