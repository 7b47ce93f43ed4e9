"""Markdown workflows over MCP, the SDK client playing the LLM: it loads a workflow, asks for
each step, calls the travel tools through the same MCP server, and reports back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import EXAMPLES
from tests.support.mcp_client import call, mcp_client

MARKDOWN_FIXTURES = (
    Path(__file__).resolve().parents[2] / "unit" / "markdown" / "fixtures" / "invalid"
)
INPUTS = {"ORIGIN": "AMS", "DESTINATION": "BCN", "DATE": "2026-12-01", "PASSENGER": "Ada"}


async def play_step(
    client: Client, step: dict[str, Any], *, break_assert: bool = False
) -> dict[str, Any]:
    """Do what the step's prompt asks with the real tools; the report's arguments."""
    number, inputs = step["step_number"], step["inputs"]
    outputs: dict[str, Any] = {}
    if number == 0:
        found = await client.call_tool(
            "search_flights",
            {
                "origin": inputs["ORIGIN"],
                "destination": inputs["DESTINATION"],
                "date": inputs["DATE"],
            },
        )
        flights = found.structured_content["result"]
        checks = [bool(flights), all(f["origin"] == inputs["ORIGIN"] for f in flights)]
        outputs = {"FLIGHT_ID": flights[0]["id"], "PRICE": flights[0]["price"]}
    elif number == 1:
        seats = await client.call_tool("check_availability", {"flight_id": inputs["FLIGHT_ID"]})
        data = seats.structured_content
        checks = [data["available"] is True, data["seats_available"] >= 1 and not break_assert]
        outputs = {"SEATS_AVAILABLE": data["seats_available"]}
    else:
        booked = await client.call_tool(
            "create_booking", {"flight_id": inputs["FLIGHT_ID"], "passenger": inputs["PASSENGER"]}
        )
        data = booked.structured_content
        checks = [data["status"] == "reserved", data["flight_id"] == inputs["FLIGHT_ID"]]
        outputs = {"BOOKING_ID": data["id"], "BOOKING_STATUS": data["status"]}
    return {
        "step_number": number,
        "status": "passed" if all(checks) else "failed",
        "assertion_results": [
            {"assertion": text, "passed": ok}
            for text, ok in zip(step["assertions"], checks, strict=True)
        ],
        "output_variables": outputs,
    }


async def run_to_end(client: Client, step: dict[str, Any], **ids: Any) -> dict[str, Any]:
    while True:
        answer = await call(client, "report_step_result", **await play_step(client, step), **ids)
        assert not answer["is_error"], answer
        if answer["workflow_status"] != "running":
            return answer
        step = answer["next_step"]


async def test_a_client_runs_the_example_from_load_to_completion(server: str) -> None:
    async with mcp_client(server) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"load_workflow", "execute_workflow_step", "report_step_result"} <= names
        assert {"get_workflow_state", "reset_workflow"} <= names
        loaded = await call(
            client, "load_workflow", path="markdown/book_flight.md", variables=INPUTS
        )
        assert loaded["status"] == "loaded", loaded
        step = await call(client, "execute_workflow_step")
        assert "Call the tool `search_flights`." in step["prompt"]
        final = await run_to_end(client, step)
        state = await call(client, "get_workflow_state")
    assert final["workflow_status"] == "completed"
    assert final["variables"]["BOOKING_ID"].startswith("BK-")
    assert [s["status"] for s in state["steps"]] == ["passed"] * 3


async def test_a_failing_assertion_stops_the_rest_and_the_step_can_be_retried(server: str) -> None:
    async with mcp_client(server) as client:
        await call(client, "load_workflow", path="markdown/book_flight.md", variables=INPUTS)
        step = await call(client, "execute_workflow_step")
        step = (await call(client, "report_step_result", **await play_step(client, step)))[
            "next_step"
        ]
        failed = await call(
            client, "report_step_result", **await play_step(client, step, break_assert=True)
        )
        assert failed["workflow_status"] == "failed"
        state = await call(client, "get_workflow_state")
        assert [s["status"] for s in state["steps"]] == ["passed", "failed", "skipped"]
        retry = await call(client, "execute_workflow_step", step_number=1)
        assert retry["status"] == "in_progress" and retry["attempt"] == 2
        final = await run_to_end(client, retry)
    assert final["workflow_status"] == "completed"


async def test_errors_are_structured_with_a_line_and_a_suggestion(server: str) -> None:
    async with mcp_client(server) as client:
        nothing = await call(client, "execute_workflow_step")
        missing = await call(
            client,
            "load_workflow",
            path="markdown/book_flight.md",
            variables={k: v for k, v in INPUTS.items() if k != "PASSENGER"},
        )
        unknown = await call(
            client,
            "load_workflow",
            content=(EXAMPLES / "markdown" / "book_flight.md")
            .read_text()
            .replace("TOOL: check_availability", "TOOL: teleport"),
            variables=INPUTS,
        )
        absent = await call(client, "load_workflow", path="markdown/nope.md")
        await call(client, "load_workflow", path="markdown/book_flight.md", variables=INPUTS)
        await call(client, "execute_workflow_step")
        early = await call(
            client, "report_step_result", step_number=2, status="passed", assertion_results=[]
        )
    assert nothing["is_error"] and nothing["error_type"] == "no_workflow_loaded"
    assert missing["is_error"] and missing["error_type"] == "variable_missing"
    assert "PASSENGER" in missing["message"] and missing["line"]
    assert unknown["is_error"] and "teleport" in unknown["message"] and unknown["line"]
    assert absent["is_error"] and absent["error_type"] == "file_not_found"
    assert early["is_error"] and early["error_type"] == "step_out_of_order"
    for error in (nothing, missing, unknown, absent, early):
        assert error["suggestion"] and error["suggested_action"] == error["suggestion"]


@pytest.mark.parametrize(
    ("fixture", "error_type"),
    [
        ("empty_workflow.md", "empty_workflow"),
        ("missing_tool_spec.md", "missing_tool_spec"),
        ("unclosed_fence.md", "invalid_format"),
    ],
)
async def test_format_errors_reach_the_client(server: str, fixture: str, error_type: str) -> None:
    content = (MARKDOWN_FIXTURES / fixture).read_text()
    async with mcp_client(server) as client:
        error = await call(client, "load_workflow", content=content)
    assert error["is_error"] and error["error_type"] == error_type
    assert error["line"] and error["suggestion"] and error["category"] == "validation"


async def test_two_sessions_run_different_workflows_at_once(server: str) -> None:
    async with mcp_client(server) as first, mcp_client(server) as second:
        await call(first, "load_workflow", path="markdown/book_flight.md", variables=INPUTS)
        other_load = await call(
            second,
            "load_workflow",
            path="markdown/waitlist_or_book.md",
            variables={"FLIGHT_ID": "FL-AMSLIS-20261201-1", "PASSENGER": "Grace"},
        )
        assert other_load["status"] == "loaded", other_load
        one, two = await asyncio.gather(
            call(first, "get_workflow_state"), call(second, "get_workflow_state")
        )
        step = await call(first, "execute_workflow_step")
        final = await run_to_end(first, step)
        other = await call(second, "get_workflow_state")
    assert one["workflow"]["title"] == "Book a flight"
    assert two["workflow"]["title"] != one["workflow"]["title"]
    assert final["workflow_status"] == "completed"
    assert other["workflow_status"] == "ready"  # untouched by the first session's run


async def test_a_server_restart_in_the_middle_loses_nothing(
    start_server: Callable[..., str], tmp_path: Path
) -> None:
    first = start_server(data_dir=tmp_path / "kept")
    async with mcp_client(first) as client:
        loaded = await call(
            client, "load_workflow", path="markdown/book_flight.md", variables=INPUTS
        )
        session = {"session_id": loaded["session_id"]}
        step = await call(client, "execute_workflow_step", **session)
        answer = await call(
            client, "report_step_result", **await play_step(client, step), **session
        )
    flight_id = answer["variables"]["FLIGHT_ID"]

    second = start_server(data_dir=tmp_path / "kept")  # a new process would read the same file
    async with mcp_client(second) as client:
        state = await call(client, "get_workflow_state", **session)
        assert [s["status"] for s in state["steps"]][:1] == ["passed"]
        step = await call(client, "execute_workflow_step", **session)
        assert step["step_number"] == 1 and step["inputs"]["FLIGHT_ID"] == flight_id
        final = await run_to_end(client, step, **session)
    assert final["workflow_status"] == "completed"
