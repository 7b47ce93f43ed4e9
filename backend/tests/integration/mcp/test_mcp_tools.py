"""The MCP server through the official SDK client over streamable HTTP (both revisions)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from dynamic_tools.demo.travel_data import OPERATIONS
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.mcp_client import LEGACY, MODERN, error_payload, mcp_client

BOOK_PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def names(result: types.ListToolsResult) -> set[str]:
    return {t.name for t in result.tools}


def stats(url: str, operation: str) -> dict[str, Any]:
    data = httpx.get(f"{url}/demo/travel/_stats").json()["operations"][operation]
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_lists_the_four_layers_with_schemas_and_annotations(server: str, mode: str) -> None:
    async with mcp_client(server, mode=mode) as client:
        listed = await client.list_tools()
    by_name = {t.name: t for t in listed.tools}
    assert set(OPERATIONS) <= set(by_name)  # layer 1: one tool per operation
    assert {"api_query", "api_execute", "api_plan"} <= set(by_name)
    assert {"w_book_flight", "w_book_with_approval", "workflow.resume"} <= set(by_name)

    search = by_name["search_flights"]
    assert search.input_schema["required"] == ["origin", "destination", "date"]
    assert search.output_schema is not None and search.output_schema["type"] == "object"
    assert search.annotations is not None and search.annotations.read_only_hint is True
    booking = by_name["create_booking"]
    assert booking.annotations is not None and booking.annotations.read_only_hint is False
    assert "├─ Category: action" in (booking.description or "")  # the hint block
    assert "Requires: check_availability" in (booking.description or "")

    flight = by_name["w_book_flight"]
    assert flight.input_schema["required"] == ["origin", "destination", "date", "passenger"]
    description = flight.description or ""
    assert "search_flights → check_availability" in description
    assert "add_to_waitlist" in description and "retry 2x" in description
    assert "passenger (str, required)" in description


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_an_api_tool_call_returns_structured_content(server: str, mode: str) -> None:
    async with mcp_client(server, mode=mode) as client:
        result = await client.call_tool(
            "search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        )
    assert not result.is_error
    flights = result.structured_content["result"]
    assert len(flights) == 3 and flights[0]["id"].startswith("FL-AMSBCN-20261201")
    assert json.loads(result.content[0].text) == flights  # repeated as text


async def test_bad_arguments_are_a_structured_error_and_send_nothing(server: str) -> None:
    before = stats(server, "search_flights")["calls"]
    async with mcp_client(server) as client:
        result = await client.call_tool("search_flights", {"origin": "Amsterdam", "date": 5})
    assert result.is_error
    # search_flights declares an outputSchema: the error is the text, not structuredContent
    assert result.structured_content is None
    error = error_payload(result)
    assert error is not None
    assert error["error_code"] == "INVALID_INPUT" and error["category"] == "validation"
    paths = {v["path"] for v in error["violations"]}
    assert {"origin", "date", "destination"} <= paths  # bad pattern, bad type, a missing field
    assert error["suggested_action"] and error["correlation_id"]
    assert stats(server, "search_flights")["calls"] == before


async def test_an_unknown_tool_is_a_protocol_error(server: str) -> None:
    async with mcp_client(server) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("drop_all_tables", {})
    assert raised.value.code == -32602 and "drop_all_tables" in raised.value.message


async def test_an_api_error_names_the_status_and_keeps_the_payload(server: str) -> None:
    async with mcp_client(server) as client:
        result = await client.call_tool(
            "api_execute",
            {"operation": "check_availability", "arguments": {"flight_id": "FL-NOPE"}},
        )
    assert result.is_error
    error = result.structured_content
    assert error["error_code"] == "API_ERROR" and error["command"] == "check_availability"
    assert error["context"]["status_code"] == 404 and error["response_payload"]
    said = error["response_payload"]["error"]["message"]  # the demo API's own words
    assert error["context"]["api_message"] == f"{said} (field flight_id)"
    assert (
        error["message"]
        == f"check_availability answered HTTP 404 Not Found: {said} (field flight_id)"
    )


async def test_execute_refuses_an_unknown_operation_with_the_choices(server: str) -> None:
    async with mcp_client(server) as client:
        result = await client.call_tool("api_execute", {"operation": "teleport", "arguments": {}})
    assert result.is_error
    violation = result.structured_content["violations"][0]
    assert violation["path"] == "operation" and "search_flights" in violation["expected"]


async def test_query_runs_the_single_shot_pipeline_with_the_fake_llm(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        tool_call("search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"})
    )
    async with mcp_client(server) as client:
        result = await client.call_tool("api_query", {"question": "Flights AMS to BCN on 1 Dec"})
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["selected_tool"] == "search_flights"
    assert data["arguments"] == {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
    assert len(data["raw_response"]["body"]) == 3
    offered = {f["function"]["name"] for f in fake_llm.requests[0]["tools"]}
    assert offered >= {"search_flights", "check_availability", "search_hotels"}
    assert "create_booking" not in offered  # safe by default: only what changes nothing


async def test_query_failure_names_the_stage(server: str, fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_call("none_suitable", {"reason": "no weather tool"}))
    async with mcp_client(server) as client:
        result = await client.call_tool("api_query", {"question": "Weather in Paris?"})
    assert result.is_error
    assert result.structured_content["error_code"] == "LLM_SELECTION_FAILED"
    assert "no weather tool" in result.structured_content["message"]


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_a_workflow_runs_with_progress_per_step(server: str, mode: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with mcp_client(server, mode=mode) as client:
        result = await client.call_tool("w_book_flight", BOOK_PARAMS, progress_callback=on_progress)
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["status"] == "succeeded" and data["result"]["status"] == "reserved"
    assert data["run_id"]
    assert [p[0] for p in progress] == sorted(p[0] for p in progress)  # increasing
    messages = [p[2] for p in progress]
    assert "search: succeeded" in messages and "reserve: succeeded" in messages
    assert progress[-1][1] == 6.0  # the workflow's six nodes
    run = httpx.get(f"{server}/runs/{data['run_id']}").json()
    assert run["status"] == "succeeded"


async def test_a_failing_workflow_returns_the_step_and_payload(server: str) -> None:
    httpx.post(
        f"{server}/demo/travel/_faults",
        json={"operation": "create_booking", "fail_next": 10, "status": 503},
    )
    async with mcp_client(server) as client:
        result = await client.call_tool(
            "w_book_with_approval", {**BOOK_PARAMS}, read_timeout_seconds=60
        )
        assert not result.is_error  # it first waits for the user's choice
        waiting = result.structured_content
        answered = await client.call_tool(
            "workflow.resume",
            {"run_id": waiting["run_id"], "values": {"selected_flight_id": "FL-AMSBCN-20261201-1"}},
        )
    assert answered.is_error
    error = error_payload(answered)
    assert error is not None
    assert error["error_code"] == "WORKFLOW_FAILED" and error["category"] == "execution"
    assert error["step_id"] == "book" and error["context"]["run_id"] == waiting["run_id"]
    assert error["command"] == "create_booking"  # the tool, not the node kind
    assert error["run_id"] == waiting["run_id"] and error["node_id"] == "book"
    body = error["response_payload"]  # the API's answer, as the run store has it
    assert isinstance(body, dict) and body != error["message"], error
    assert error["context"]["status_code"] == 503
    assert error["context"]["api_message"] == body["error"]["message"]  # "injected failure …"


async def test_a_yield_is_answered_by_elicitation(server: str) -> None:
    asked: list[types.ElicitRequestFormParams] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        flight = "FL-TYPO" if len(asked) == 1 else "FL-AMSBCN-20261201-2"  # a typo, then right
        return types.ElicitResult(action="accept", content={"selected_flight_id": flight})

    async with mcp_client(server, elicitation_callback=answer) as client:
        result = await client.call_tool("w_book_with_approval", BOOK_PARAMS)
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded"
    assert result.structured_content["result"]["status"] == "captured"  # the payment
    assert len(asked) == 2
    assert asked[0].message.startswith("Found 3 flights (FL-AMSBCN-20261201-1 at")
    field = asked[0].requested_schema["properties"]["selected_flight_id"]
    assert field["type"] == "string" and "enum" not in field
    assert [o["const"] for o in field["oneOf"]] == [f"FL-AMSBCN-20261201-{i}" for i in (1, 2, 3)]
    assert all(o["title"].endswith(" EUR") for o in field["oneOf"])  # the example's label
    assert "values.selected_flight_id: must be one of" in asked[1].message
    assert stats(server, "create_booking")["calls"] == 1


async def test_a_declined_elicitation_cancels_the_run(server: str) -> None:
    async def decline(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with mcp_client(server, elicitation_callback=decline) as client:
        result = await client.call_tool("w_book_with_approval", BOOK_PARAMS)
    assert result.is_error
    error = error_payload(result)
    assert error is not None and error["error_code"] == "WORKFLOW_CANCELLED"
    assert "declined" in error["message"]
    assert stats(server, "create_booking")["calls"] == 0


async def test_a_yield_without_elicitation_waits_and_resumes(server: str) -> None:
    async with mcp_client(server) as client:  # this client offers no elicitation
        first = await client.call_tool("w_book_with_approval", BOOK_PARAMS)
        waiting = first.structured_content
        assert not first.is_error and waiting["status"] == "waiting_input"
        assert waiting["waiting"]["node_id"] == "present_options"
        assert "selected_flight_id" in waiting["waiting"]["expects"]
        assert waiting["resume_with"] == "workflow.resume"
        text = first.content[0].text  # what the LLM reads: the offered flights, by id and label
        assert "selected_flight_id (str, one of: FL-AMSBCN-20261201-1 = " in text
        wrong = await client.call_tool(
            "workflow.resume", {"run_id": waiting["run_id"], "values": {"selected_flight": 1}}
        )
        assert wrong.is_error and (error_payload(wrong) or {})["category"] == "validation"
        done = await client.call_tool(
            "workflow.resume",
            {"run_id": waiting["run_id"], "values": {"selected_flight_id": "FL-AMSBCN-20261201-1"}},
        )
    assert not done.is_error, done.content
    assert done.structured_content["status"] == "succeeded"


async def test_a_yield_on_the_stateless_revision_is_input_required(server: str) -> None:
    asked: list[Any] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(
            action="accept", content={"selected_flight_id": "FL-AMSBCN-20261201-2"}
        )

    async with mcp_client(server, mode=MODERN, elicitation_callback=answer) as client:
        result = await client.call_tool("w_book_with_approval", BOOK_PARAMS)
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded"
    assert result.structured_content["result"]
    assert len(asked) == 1 and "Which one" in asked[0].message


async def test_cancelling_the_request_cancels_the_run(server: str) -> None:
    httpx.post(
        f"{server}/demo/travel/_faults",
        json={"operation": "check_availability", "latency_ms": 30_000},
    )
    async with mcp_client(server) as client:
        call = asyncio.create_task(client.call_tool("w_book_flight", BOOK_PARAMS))
        run_id = await _active_run(server)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        run = await _wait_status(server, run_id, {"cancelled"})
    assert run["status"] == "cancelled"


async def _active_run(url: str) -> str:
    async with httpx.AsyncClient() as http:
        for _ in range(600):
            runs = (await http.get(f"{url}/runs", params={"status": "running"})).json()
            items = runs["runs"] if isinstance(runs, dict) else runs
            if items:
                return str(items[0]["run_id"])
            await asyncio.sleep(0.05)
    raise AssertionError("no run started")


async def _wait_status(url: str, run_id: str, wanted: set[str]) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        for _ in range(600):
            run: dict[str, Any] = (await http.get(f"{url}/runs/{run_id}")).json()
            if run["status"] in wanted:
                return run
            await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {wanted}")


async def test_resources_give_the_overview_and_the_graphs(server: str) -> None:
    async with mcp_client(server) as client:
        listed = await client.list_resources()
        uris = {str(r.uri) for r in listed.resources}
        assert "workflow://travel_booking/overview" in uris
        assert "workflow://travel_booking/book_flight" in uris
        templates = await client.list_resource_templates()
        assert {t.uri_template for t in templates.resource_templates} >= {
            "workflow://{domain}/overview",
            "workflow://{domain}/{workflow}",
        }
        guide = await client.read_resource("workflow://travel_booking/overview")
        graph = await client.read_resource("workflow://travel_booking/book_flight")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("workflow://travel_booking/teleport")
    text = guide.contents[0].text
    assert text.startswith("# travel_booking — Workflow Guide")
    assert "Steps: search_flights → check_availability" in text
    assert "Never call create_booking without check_availability first." in text
    data = json.loads(graph.contents[0].text)
    assert data["tool"] == "w_book_flight"
    assert [s["node_id"] for s in data["steps"]][:2] == ["search", "check"]
    assert "teleport" in missing.value.message


async def test_headers_change_the_tool_list_and_what_can_be_called(server: str) -> None:
    async with mcp_client(server, headers={"X-API-Name": "travel"}) as client:
        listed = names(await client.list_tools())
        with pytest.raises(MCPError):
            await client.call_tool("api_query", {"question": "hi"})
    assert "travel_query" in listed and "api_query" not in listed
    async with mcp_client(server, headers={"X-API-Type": "graphql"}) as client:
        with pytest.raises(MCPError) as refused:
            await client.list_tools()
    assert "x-api-type" in str(refused.value.data) or "graphql" in refused.value.message


async def test_workflows_can_be_switched_off(start_server: Callable[..., str]) -> None:
    url = start_server(enable_workflows=False)
    async with mcp_client(url) as client:
        listed = names(await client.list_tools())
        resources = await client.list_resources()
    assert not [n for n in listed if n.startswith("w_")] and "workflow.resume" not in listed
    assert not [r for r in resources.resources if str(r.uri).startswith("workflow://")]
    assert "search_flights" in listed


async def test_the_api_token_guards_mcp(start_server: Callable[..., str]) -> None:
    url = start_server(api_token="tok-3f9a1c")
    async with httpx.AsyncClient() as http:
        refused = await http.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
    async with mcp_client(url, headers={"Authorization": "Bearer tok-3f9a1c"}) as client:
        assert "search_flights" in names(await client.list_tools())


async def test_plan_suggests_a_workflow_or_infers_an_order(
    start_server: Callable[..., str],
) -> None:
    url = start_server()
    async with mcp_client(url) as client:
        suggested = await client.call_tool(
            "api_plan", {"goal": "book a flight from AMS to BCN and wait for approval"}
        )
        blank = await client.call_tool("api_plan", {"goal": "   "})
    assert not suggested.is_error, suggested.content
    plan = suggested.structured_content
    assert plan["kind"] == "workflow"
    assert plan["workflow"]["tool"].startswith("w_book")
    assert "origin" in plan["workflow"]["params"]
    assert blank.is_error and blank.structured_content["violations"][0]["path"] == "goal"

    no_workflows = start_server(enable_workflows=False)
    async with mcp_client(no_workflows) as client:
        inferred = await client.call_tool("api_plan", {"goal": "book a flight and pay for it"})
    order = inferred.structured_content
    assert order["kind"] == "tool_order", order
    steps = [s["tool"] for s in order["steps"]]
    assert steps.index("search_flights") < steps.index("check_availability")
    assert steps.index("check_availability") < steps.index("create_booking")
    assert steps.index("create_booking") < steps.index("process_payment")
    assert any(u["kind"] == "branch" for u in order["undecided"])


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "host-check", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_other_host_names_are_refused_unless_configured(
    start_server: Callable[..., str],
) -> None:
    strict = start_server()
    opened = start_server(mcp_allowed_hosts=["mcp.example.com"])
    async with httpx.AsyncClient() as http:
        refused = await http.post(
            f"{strict}/mcp", json=INITIALIZE, headers={**ACCEPT, "Host": "mcp.example.com"}
        )
        allowed = await http.post(
            f"{opened}/mcp", json=INITIALIZE, headers={**ACCEPT, "Host": "mcp.example.com"}
        )
    assert refused.status_code in (400, 403, 421) and "host" in refused.text.lower()
    assert allowed.status_code == 200, allowed.text
