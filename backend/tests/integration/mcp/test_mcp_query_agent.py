"""``{prefix}_query`` as a bounded agent (the real ``mcp`` SDK client, the scripted fake LLM).

A question that needs a list and then details is answered in two calls over REST (the travel
registry: search → availability of the cheapest) and GraphQL (flights → one flight), its steps
listed; the trace becomes a sequence recipe replayed without the LLM (as an ``r_*`` tool and by
``_query`` on a matching question) and dropped when an operation it uses changes. Budgets (steps,
tokens, time), a model asking for a write, and a model repeating a call end the loop with the
steps made, nothing unsafe sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.support.fake_llm import FakeLLM, Reply, answer, tool_call
from tests.support.graphql_api import TOKEN, GraphQLApi
from tests.support.mcp_client import error_payload, mcp_client

SEARCH = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
QUESTION = "How many seats are left on the cheapest flight from AMS to BCN on 2026-12-01?"
SEQUENCE = "r_search_flights_then_check_availability"  # then "_by_…", cut to 64 characters


def sequence_of(tools: list[Any]) -> str:
    (name,) = [t.name for t in tools if t.name.startswith(SEQUENCE)]
    return str(name)


def flights(server: str, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
    """The demo API's flights, read directly (not through the MCP server)."""
    answer = httpx.get(
        f"{server}/demo/travel/flights",
        params={"origin": origin, "destination": destination, "date": date},
    )
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()
    return found


def cheapest(server: str, origin: str, destination: str, date: str) -> str:
    found = flights(server, origin, destination, date)
    prices = [f["price"] for f in found]
    assert prices.count(min(prices)) == 1  # the example's data singles out one
    return str(min(found, key=lambda f: f["price"])["id"])


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The function results the model was shown in one LLM request."""
    return [json.loads(m["content"]) for m in request["messages"] if m.get("role") == "tool"]


async def test_a_two_call_question_over_rest_is_answered_listed_and_learned(
    server: str, fake_llm: FakeLLM
) -> None:
    flight_id = cheapest(server, "AMS", "BCN", "2026-12-01")
    fake_llm.script(
        tool_call("search_flights", SEARCH),
        tool_call("check_availability", {"flight_id": flight_id}),
        answer(f"{flight_id} is the cheapest; see its seats"),
    )
    async with mcp_client(server) as client:
        result = await client.call_tool("api_query", {"question": QUESTION})
        assert not result.is_error, result.content
        data = result.structured_content
        listed = {t.name: t for t in (await client.list_tools()).tools}
        name = sequence_of(list(listed.values()))

        asked = len(fake_llm.requests)
        by_tool = await client.call_tool(
            name, {"origin": "LIS", "destination": "MAD", "date": "2026-12-02"}
        )
        by_question = await client.call_tool(
            "api_query",
            {
                "question": QUESTION.replace("AMS", "LIS")
                .replace("BCN", "MAD")
                .replace("01?", "02?")
            },
        )
    assert data["answer"] == f"{flight_id} is the cheapest; see its seats"
    assert [(s["tool"], s["status"], s["rows"]) for s in data["steps"]] == [
        ("search_flights", "ok", 3),
        ("check_availability", "ok", 1),
    ]
    assert data["steps"][1]["arguments"] == {"flight_id": flight_id}
    assert data["selected_tool"] == "check_availability"
    assert data["raw_response"]["body"]["flight_id"] == flight_id
    assert len(fake_llm.requests) == asked == 3  # two calls, one answer
    shown = tool_results(fake_llm.requests[1])  # the second round read the first answer
    assert flight_id in json.dumps(shown[0]["body"]) and shown[0]["table"] == "step_0"
    offered = {f["function"]["name"] for f in fake_llm.requests[0]["tools"]}
    assert {"search_flights", "check_availability", "answer"} <= offered
    assert "create_booking" not in offered

    recipe = listed[name]
    assert len(name) <= 64
    assert set(recipe.input_schema["required"]) == {"origin", "destination", "date"}
    assert "search_flights → check_availability" in (recipe.description or "")
    assert recipe.annotations is not None and recipe.annotations.read_only_hint is True

    other = cheapest(server, "LIS", "MAD", "2026-12-02")
    assert not by_tool.is_error, by_tool.content
    replayed = by_tool.structured_content
    assert replayed["result"]["flight_id"] == other  # the cheapest again, not the same row
    assert [s["tool"] for s in replayed["steps"]] == ["search_flights", "check_availability"]
    assert not by_question.is_error, by_question.content
    matched = by_question.structured_content
    assert matched["recipe"] == name
    assert matched["raw_response"]["body"]["flight_id"] == other
    assert matched["steps"][0]["arguments"] == {
        "origin": "LIS",
        "destination": "MAD",
        "date": "2026-12-02",
    }
    assert len(fake_llm.requests) == asked  # both replays without the LLM


async def test_a_sequence_recipe_is_dropped_when_an_operation_it_uses_changes(
    server: str, fake_llm: FakeLLM
) -> None:
    flight_id = cheapest(server, "AMS", "BCN", "2026-12-01")
    fake_llm.script(
        tool_call("search_flights", SEARCH),
        tool_call("check_availability", {"flight_id": flight_id}),
        answer(),
    )
    async with mcp_client(server) as client:
        await client.call_tool("api_query", {"question": QUESTION})
        name = sequence_of((await client.list_tools()).tools)

        tool = httpx.get(f"{server}/tools/check_availability").json()
        for derived in ("endpoint", "input_schema", "effective_annotations"):
            tool.pop(derived, None)
        tool["parameters"]["detail"] = {"in": "query", "type": "string", "enum": ["full"]}
        changed = httpx.put(f"{server}/tools/check_availability", json=tool)
        assert changed.status_code == 200, changed.text

        names = {t.name for t in (await client.list_tools()).tools}
        fake_llm.script(answer("no recipe now"))
        again = await client.call_tool("api_query", {"question": QUESTION})
    assert name not in names and "check_availability" in names
    assert again.structured_content.get("recipe") is None  # asked the LLM again
    assert again.structured_content["answer"] == "no recipe now"


def graphql_session(graph: GraphQLApi) -> dict[str, str]:
    return {
        "X-Target-URL": graph.endpoint,
        "X-API-Type": "graphql",
        "X-API-Name": "flights",
        "X-Target-Headers": json.dumps({"Authorization": TOKEN}),
    }


LIST = (
    "query List($o: String!, $d: String!, $day: String!) "
    "{ flights(origin: $o, destination: $d, date: $day) { id price } }"
)
DETAILS = "query One($id: ID!) { flight(id: $id) { id airline seatsAvailable } }"
GRAPH_QUESTION = "Which airline flies the cheapest flight from AMS to BCN on 2026-12-01?"


async def test_a_two_call_question_over_graphql_is_answered_and_replayed(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        tool_call(
            "flights_graphql",
            {"query": LIST, "variables": {"o": "AMS", "d": "BCN", "day": "2026-12-01"}},
        ),
        tool_call("flights_graphql", {"query": DETAILS, "variables": {"id": "FL-2"}}),
        answer("Vueling", sql="SELECT airline FROM step_1"),
    )
    async with mcp_client(graph_gateway, headers=graphql_session(graph)) as client:
        result = await client.call_tool("flights_query", {"question": GRAPH_QUESTION})
        assert not result.is_error, result.content
        listed = {t.name: t for t in (await client.list_tools()).tools}
        asked = len(fake_llm.requests)
        sent = len(graph.seen)
        replayed = await client.call_tool(
            "flights_query",
            {"question": GRAPH_QUESTION.replace("AMS", "LIS").replace("BCN", "OPO")},
        )
    data = result.structured_content
    assert data["answer"] == "Vueling"
    assert [(s["tool"], s["status"], s["rows"]) for s in data["steps"]] == [
        ("flights_graphql", "ok", 2),
        ("flights_graphql", "ok", 1),
    ]
    assert data["sql"]["rows"] == [{"airline": "Vueling"}]
    recipe = next(t for t in listed.values() if t.name.startswith("r_flights_graphql"))
    assert set(recipe.input_schema["required"]) == {"o", "d", "day"}

    assert not replayed.is_error, replayed.content
    again = replayed.structured_content
    assert again["recipe"] == recipe.name
    assert again["steps"][0]["arguments"]["variables"] == {
        "o": "LIS",
        "d": "OPO",
        "day": "2026-12-01",
    }
    assert again["steps"][1]["arguments"]["variables"] == {"id": "FL-2"}  # the cheapest again
    assert again["sql"]["rows"] == [{"airline": "Vueling"}]  # the learned SQL replays too
    assert len(fake_llm.requests) == asked  # no LLM
    assert len(graph.seen) == sent + 2


async def test_the_step_budget_ends_the_loop_with_the_steps_made(
    start_server: Callable[..., str], fake_llm: FakeLLM
) -> None:
    url = start_server(query_max_steps=2)
    fake_llm.script(
        *[tool_call("search_flights", {**SEARCH, "date": f"2026-12-0{d}"}) for d in (1, 2, 3)]
    )
    async with mcp_client(url) as client:
        result = await client.call_tool("api_query", {"question": "Flights AMS-BCN in December"})
    error = error_payload(result)
    assert error is not None and error["error_code"] == "QUERY_STOPPED"
    assert error["context"]["reason"] == "step_budget"
    assert "QUERY_MAX_STEPS" in error["message"]
    assert [s["status"] for s in error["steps"]] == ["ok", "ok"]
    last = fake_llm.requests[-1]
    assert [f["function"]["name"] for f in last["tools"]] == ["answer"]  # told to answer


async def test_the_token_budget_ends_the_loop(
    start_server: Callable[..., str], fake_llm: FakeLLM
) -> None:
    url = start_server(query_max_steps=20, query_max_tokens=1000)  # 120 tokens a reply
    fake_llm.script(
        *[tool_call("search_flights", {**SEARCH, "date": f"2026-12-{d:02}"}) for d in range(1, 15)]
    )
    async with mcp_client(url) as client:
        result = await client.call_tool("api_query", {"question": "Flights AMS-BCN in December"})
    error = error_payload(result)
    assert error is not None and error["context"]["reason"] == "token_budget"
    assert len(error["steps"]) == 9 and len(fake_llm.requests) == 9  # 9 x 120 tokens
    assert error["usage"]["total_tokens"] == 1080


async def test_the_time_budget_ends_the_loop(
    start_server: Callable[..., str], fake_llm: FakeLLM
) -> None:
    url = start_server(query_time_budget_s=1.0)

    def slow(_: dict[str, Any]) -> Reply:
        time.sleep(1.5)
        return answer("too late")

    fake_llm.script(tool_call("search_flights", SEARCH))
    fake_llm.fallback = slow
    async with mcp_client(url) as client:
        result = await client.call_tool("api_query", {"question": "Flights AMS-BCN?"})
    error = error_payload(result)
    assert error is not None and error["context"]["reason"] == "time_budget"
    assert "QUERY_TIME_BUDGET_S" in error["message"]
    assert [s["tool"] for s in error["steps"]] == ["search_flights"]


async def test_a_write_the_model_asks_for_is_refused_and_never_sent(
    server: str, fake_llm: FakeLLM
) -> None:
    flight_id = cheapest(server, "AMS", "BCN", "2026-12-01")
    seats = httpx.get(f"{server}/demo/travel/flights/{flight_id}/availability").json()
    fake_llm.script(
        tool_call("create_booking", {"flight_id": flight_id, "passenger": "Ada"}),
        answer("I may not book"),
    )
    async with mcp_client(server) as client:
        result = await client.call_tool("api_query", {"question": f"Book {flight_id} for Ada"})
    assert not result.is_error, result.content
    (step,) = result.structured_content["steps"]
    assert step["status"] == "refused" and "X-Allow-Unsafe-Paths" in step["message"]
    assert "X-Allow-Unsafe-Paths" in tool_results(fake_llm.requests[1])[0]["message"]
    after = httpx.get(f"{server}/demo/travel/flights/{flight_id}/availability").json()
    assert after == seats  # nothing was booked


async def test_a_mutation_the_model_writes_is_refused_and_never_sent(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    mutation = 'mutation { createBooking(flightId: "FL-1", passenger: "Ada") { id } }'
    fake_llm.script(tool_call("flights_graphql", {"query": mutation}), answer("refused"))
    async with mcp_client(graph_gateway, headers=graphql_session(graph)) as client:
        result = await client.call_tool("flights_query", {"question": "Book FL-1 for Ada"})
    (step,) = result.structured_content["steps"]
    assert step["status"] == "refused" and "X-Allow-Unsafe-Paths" in step["message"]
    assert "createBooking" in step["message"]  # the pattern that would allow it
    assert graph.bookings == [] and not any("createBooking" in q for q, _ in graph.seen)


async def test_a_model_looping_on_the_same_call_is_refused_then_stopped(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[tool_call("search_flights", SEARCH)] * 4)
    async with mcp_client(server) as client:
        result = await client.call_tool("api_query", {"question": "Flights AMS-BCN?"})
    error = error_payload(result)
    assert error is not None and error["error_code"] == "QUERY_STOPPED"
    assert error["context"]["reason"] == "repeated_call"
    assert [s["status"] for s in error["steps"]] == ["ok", "repeated", "repeated"]
    told = tool_results(fake_llm.requests[2])[-1]
    assert told["status"] == "repeated" and "not sent again" in told["message"]
    assert len(fake_llm.requests) == 3


async def test_a_one_call_question_costs_one_round_plus_the_answer(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(tool_call("search_flights", SEARCH), answer("three flights"))
    async with mcp_client(server) as client:
        result = await client.call_tool("api_query", {"question": "Flights AMS to BCN on 1 Dec"})
    assert not result.is_error, result.content
    assert len(fake_llm.requests) == 2
    assert result.structured_content["answer"] == "three flights"


FLOW = """\
domain: flights
workflows:
  cheapest_airline:
    params: {origin: {type: str, required: true}}
    graph:
      ask:
        call: flights_query
        args: {question: "Airline of the cheapest flight from $origin to BCN on 2026-12-01"}
        output: found
    outputs:
      airline: $found.data.flight.airline
"""


async def test_a_workflow_call_of_query_chains_calls_too(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM, travel_root: Path
) -> None:
    (travel_root / "cheapest.yaml").write_text(FLOW)
    fake_llm.script(
        tool_call(
            "flights_graphql",
            {"query": LIST, "variables": {"o": "AMS", "d": "BCN", "day": "2026-12-01"}},
        ),
        tool_call("flights_graphql", {"query": DETAILS, "variables": {"id": "FL-2"}}),
        answer("Vueling"),
    )
    headers = {
        **graphql_session(graph),
        "X-Workflow-URL": f"file://{travel_root / 'cheapest.yaml'}",
    }
    async with mcp_client(graph_gateway, headers=headers) as client:
        result = await client.call_tool("w_cheapest_airline", {"origin": "AMS"})
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded", result.structured_content
    assert result.structured_content["result"] == {"airline": "Vueling"}  # the last answer
    assert len(fake_llm.requests) == 3
