"""A session's tools are its workflows' tools (docs/design-sources.md): workflows brought by
X-Workflow-URL run against the operations of X-Target-URL, the session's core tools
{prefix}_query / {prefix}_execute and the registry, with the session's X-Target-Headers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.mcp_client import mcp_client
from tests.support.team_api import TOKEN, TeamApi, running_team_api

TRAVEL = (EXAMPLES / "workflows" / "travel.yaml").read_text()
CORE_CALLS = """\
domain: flights
workflows:
  check_flight_status:
    description: Check the status of a flight (the orchestration plan's linear workflow)
    params:
      flight_number: {type: str, required: true, example: FL-AMSBCN-20261201-1}
    graph:
      lookup:
        call: flights_query
        args: {question: "Get status for flight $flight_number"}
        output: status
  book_directly:
    description: Book a flight through flights_execute
    params:
      flight_id: {type: str, required: true}
      passenger: {type: str, required: true}
    graph:
      book:
        call: flights_execute
        args:
          operation: create_booking
          arguments: {flight_id: $flight_id, passenger: $passenger}
        output: booking
    outputs:
      booking_id: $booking.id
"""
PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


@pytest.fixture
def team() -> Iterator[TeamApi]:
    with running_team_api({"travel.yaml": TRAVEL, "core.yaml": CORE_CALLS}) as api:
        yield api


SEED_HINTS = {  # docs/design-sources.md#tool-discovery-design, strategy 1
    "search_flights": {
        "category": "search",
        "outputs": ["flight_id", "airline", "price", "departure", "arrival"],
        "next": ["check_availability"],
        "hint": "Always search before booking. Results contain flight_id needed by downstream "
        "tools.",
    },
    "create_booking": {
        "category": "booking",
        "requires": ["check_availability"],
        "outputs": ["booking_id", "status", "total_price"],
        "next": ["process_payment"],
        "hint": "Only call after check_availability confirms seats. Returns booking_id for "
        "payment.",
    },
}


def session(team: TeamApi, document: str) -> dict[str, str]:
    """The designs' REST setup: the team's API, its workflows, hints and credentials."""
    return {
        "X-Target-URL": team.openapi,
        "X-API-Type": "rest",
        "X-API-Name": "flights",
        "X-Target-Headers": json.dumps({"Authorization": TOKEN}),
        "X-Workflow-URL": team.document(document),
        "X-Tool-Hints": json.dumps(SEED_HINTS),
    }


@pytest.fixture
def gateway(start_server: Callable[..., str], team: TeamApi) -> str:
    return start_server(allowed_target_hosts=[team.host])


def calls_to(team: TeamApi, path: str) -> list[str | None]:
    return [auth for seen, auth in team.seen if seen == path]


async def test_a_session_workflow_calls_the_session_api_with_its_headers(
    gateway: str, team: TeamApi
) -> None:
    async with mcp_client(gateway, headers=session(team, "travel.yaml")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("w_book_flight", PARAMS)
    assert {"w_book_flight", "w_book_trip", "search_flights", "flights_query"} <= set(tools)
    assert "Only call after check_availability confirms seats" in str(
        tools["create_booking"].description
    )
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded", result.structured_content
    assert calls_to(team, "/bookings") == [TOKEN]  # the team's API, with the session's token
    assert calls_to(team, "/flights") == [TOKEN]
    assert TOKEN not in json.dumps(result.model_dump(mode="json"))


async def test_a_session_workflow_calls_the_core_tools(
    gateway: str, team: TeamApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(tool_call("check_availability", {"flight_id": "FL-AMSBCN-20261201-1"}))
    async with mcp_client(gateway, headers=session(team, "core.yaml")) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        booked = await client.call_tool(
            "w_book_directly", {"flight_id": "FL-AMSBCN-20261201-1", "passenger": "Ada"}
        )
        status = await client.call_tool(
            "w_check_flight_status", {"flight_number": "FL-AMSBCN-20261201-1"}
        )
    assert {"w_book_directly", "w_check_flight_status"} <= names
    assert booked.structured_content["status"] == "succeeded", booked.structured_content
    assert booked.structured_content["result"]["booking_id"].startswith("BK")
    assert status.structured_content["status"] == "succeeded", status.structured_content
    answer: Any = status.structured_content["result"]
    assert "seats_available" in json.dumps(answer)
    assert calls_to(team, "/bookings") == [TOKEN]
    assert calls_to(team, "/flights/FL-AMSBCN-20261201-1/availability") == [TOKEN]
    prompt = json.dumps(fake_llm.requests)
    assert "Get status for flight FL-AMSBCN-20261201-1" in prompt
    assert TOKEN not in prompt  # the session's headers never reach the LLM


async def test_query_in_a_workflow_is_read_only_unless_the_session_allows_writes(
    gateway: str, team: TeamApi, fake_llm: FakeLLM
) -> None:
    team.documents["ask.yaml"] = """\
domain: flights
workflows:
  ask:
    params: {question: {type: str, required: true}}
    graph:
      answer: {call: flights_query, args: {question: $question}, output: answer}
    outputs: {answer: $answer}
"""
    booking = tool_call("create_booking", {"flight_id": "FL-AMSBCN-20261201-1", "passenger": "Ada"})
    fake_llm.script(booking, booking, booking)
    async with mcp_client(gateway, headers=session(team, "ask.yaml")) as client:
        refused = await client.call_tool("w_ask", {"question": "Book FL-AMSBCN-20261201-1 for Ada"})
    offered = {f["function"]["name"] for f in fake_llm.requests[0]["tools"]}
    assert "create_booking" not in offered and "search_flights" in offered
    assert refused.is_error and "WORKFLOW_FAILED" in refused.content[0].text
    assert "'create_booking' changes things" in refused.content[0].text  # the read-only rule
    assert "X-Allow-Unsafe-Paths" in refused.content[0].text
    assert calls_to(team, "/bookings") == []

    fake_llm.reset()
    fake_llm.script(booking)
    allowed = {**session(team, "ask.yaml"), "X-Allow-Unsafe-Paths": "/bookings"}
    async with mcp_client(gateway, headers=allowed) as client:
        booked = await client.call_tool("w_ask", {"question": "Book FL-AMSBCN-20261201-1 for Ada"})
    assert booked.structured_content["status"] == "succeeded", booked.structured_content
    assert booked.structured_content["result"]["answer"]["id"].startswith("BK")
    assert calls_to(team, "/bookings") == [TOKEN]
