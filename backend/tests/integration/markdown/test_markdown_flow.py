"""Markdown workflows end to end through the service, a scripted model calling the real travel
tools: a full passing run, a failing step (fail-fast) retried without reset, two sessions at
once, and a restart in the middle (SQLite file and PostgreSQL)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import pytest

from dynamic_tools.tools.registry import ToolRegistry
from tests.integration.markdown.conftest import (
    FLIGHT_INPUTS,
    Model,
    open_service,
    play_book_flight_step,
    report,
)


async def test_a_full_run_passes_every_step_and_carries_the_variables(model: Model) -> None:
    loaded = await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    assert loaded["status"] == "loaded" and loaded["replaced"] is None
    assert loaded["workflow"]["source"] == "markdown/book_flight.md"
    assert loaded["workflow"]["title"] == "Book a flight"
    assert [s["name"] for s in loaded["workflow"]["steps"]] == [
        "Search flights",
        "Check seats",
        "Reserve the seat",
    ]
    assert loaded["workflow"]["required_inputs"] == ["ORIGIN", "DESTINATION", "DATE", "PASSENGER"]
    assert "execute_workflow_step" in loaded["next_action"]

    step = await model.mcp("execute_workflow_step")
    assert (step["status"], step["step_number"], step["attempt"]) == ("in_progress", 0, 1)
    prompt = step["prompt"]
    assert "Search the flights from AMS to BCN on 2026-12-01" in prompt
    assert "[ORIGIN]" not in prompt
    assert "Call the tool `search_flights`." in prompt
    assert "2. Every flight returned goes from AMS to BCN" in prompt
    assert "result[0].id → report as `FLIGHT_ID`" in prompt
    assert '"step_number": 0' in prompt and "report_step_result" in prompt
    assert f'"session_id": "{model.transport_session_id}"' in prompt
    assert step["report_schema"]["required"] == ["step_number", "status"]

    again = await model.mcp("execute_workflow_step")  # repeats the prompt, no new attempt
    assert again["prompt"] == prompt and again["attempt"] == 1

    answers = []
    while True:
        answer = await model.mcp("report_step_result", **await play_book_flight_step(model, step))
        answers.append(answer)
        assert answer["warnings"] == []
        if answer["workflow_status"] != "running":
            break
        step = answer["next_step"]
        assert step["status"] == "in_progress"

    assert model.calls == ["search_flights", "check_availability", "create_booking"]
    flight_id = answers[0]["variables"]["FLIGHT_ID"]
    assert flight_id.startswith("FL-AMSBCN-20261201")
    assert f"Check that flight {flight_id} still has a seat." in answers[0]["next_step"]["prompt"]
    final = answers[-1]
    assert final["workflow_status"] == "completed" and final["next_step"] is None
    assert final["summary"] == {
        "passed": 3,
        "failed": 0,
        "skipped": 0,
        "in_progress": 0,
        "not_started": 0,
        "total": 3,
    }
    assert final["variables"]["BOOKING_STATUS"] == "reserved"
    assert final["variables"]["BOOKING_ID"].startswith("BK-")
    assert "complete" in final["next_action"]

    state = await model.mcp("get_workflow_state")
    assert state["workflow_status"] == "completed" and state["current_step"] is None
    assert [s["status"] for s in state["steps"]] == ["passed"] * 3
    assert state["steps"][1]["assertion_results"] == [
        {
            "assertion": "result.available == true",
            "passed": True,
            "line": 43,
            "detail": "checked against the tool result",
        },
        {
            "assertion": "result.seats_available >= 1",
            "passed": True,
            "line": 44,
            "detail": "checked against the tool result",
        },
    ]
    done = await model.mcp("execute_workflow_step")
    assert done["status"] == "completed" and done["summary"]["passed"] == 3

    reset = await model.mcp("reset_workflow")
    assert reset["status"] == "reset" and reset["variables"] == FLIGHT_INPUTS
    after = await model.mcp("get_workflow_state")
    assert after["workflow_status"] == "ready"
    assert [s["status"] for s in after["steps"]] == ["not_started"] * 3


async def test_a_failing_step_skips_the_rest_and_is_retried_without_reset(
    model: Model, travel: httpx.AsyncClient
) -> None:
    await model.mcp("load_workflow", path="markdown/book_flight.md", variables=FLIGHT_INPUTS)
    step = await model.mcp("execute_workflow_step")
    answer = await model.mcp("report_step_result", **await play_book_flight_step(model, step))
    step = answer["next_step"]

    fault = {"operation": "check_availability", "fail_next": 1, "status": 503}
    assert (await travel.post("/demo/travel/_faults", json=fault)).status_code == 200
    failed = await model.mcp("report_step_result", **await play_book_flight_step(model, step))
    assert failed["workflow_status"] == "failed"
    assert failed["recorded"]["status"] == "failed"
    assert failed["recorded"]["error_message"].startswith("HTTP 503")
    assert failed["skipped_steps"] == [2] and failed["next_step"] is None
    assert "retry" in failed["next_action"] and "execute_workflow_step" in failed["next_action"]
    state = await model.mcp("get_workflow_state")
    assert [s["status"] for s in state["steps"]] == ["passed", "failed", "skipped"]
    assert "SEATS_AVAILABLE" not in state["variables"]

    retry = await model.mcp("execute_workflow_step")  # the fault is spent: the API answers now
    assert (retry["step_number"], retry["attempt"]) == (1, 2)
    assert "(attempt 2)" in retry["prompt"]
    state = await model.mcp("get_workflow_state")
    assert [s["status"] for s in state["steps"]] == ["passed", "in_progress", "not_started"]
    assert state["workflow_status"] == "running"

    passed = await model.mcp("report_step_result", **await play_book_flight_step(model, retry))
    assert passed["workflow_status"] == "running" and passed["next_step"]["step_number"] == 2
    last = await model.mcp(
        "report_step_result", **await play_book_flight_step(model, passed["next_step"])
    )
    assert last["workflow_status"] == "completed"
    final = await model.mcp("get_workflow_state")
    assert [(s["status"], s["attempts"]) for s in final["steps"]] == [
        ("passed", 1),
        ("passed", 2),
        ("passed", 1),
    ]


async def test_a_failed_assertion_fails_the_step_even_when_reported_passed(model: Model) -> None:
    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    step = await model.mcp("execute_workflow_step")
    arguments = await play_book_flight_step(model, step)
    arguments["assertion_results"][1]["passed"] = False  # the model saw another route
    answer = await model.mcp("report_step_result", **arguments)
    assert answer["recorded"]["status"] == "failed"
    assert answer["workflow_status"] == "failed" and answer["skipped_steps"] == [1, 2]
    assert "Every flight returned goes from AMS to BCN" in answer["warnings"][0]
    assert answer["recorded"]["error_message"] == answer["warnings"][0]
    assert "FLIGHT_ID" not in answer["variables"]

    # Re-reporting the failed step is a retry too (a model that corrects its verdict).
    corrected = await model.mcp("report_step_result", **await play_book_flight_step(model, step))
    assert corrected["recorded"]["status"] == "passed" and corrected["recorded"]["attempt"] == 2
    assert corrected["workflow_status"] == "running"
    assert corrected["next_step"]["step_number"] == 1 and corrected["skipped_steps"] == []


async def test_two_sessions_run_different_workflows_at_the_same_time(
    model: Model, tools: ToolRegistry, travel: httpx.AsyncClient
) -> None:
    other = Model(model.service, tools, travel)
    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    waitlist_inputs = {"FLIGHT_ID": "FL-AMSBCN-20261201-2", "PASSENGER": "Grace"}
    await other.mcp("load_workflow", path="waitlist_or_book.md", variables=waitlist_inputs)

    async def run_flight() -> None:
        step = await model.mcp("execute_workflow_step")
        while True:
            answer = await model.mcp(
                "report_step_result", **await play_book_flight_step(model, step)
            )
            if answer["workflow_status"] != "running":
                assert answer["workflow_status"] == "completed"
                return
            step = answer["next_step"]
            await asyncio.sleep(0)

    async def run_waitlist() -> None:
        step = await other.mcp("execute_workflow_step")
        assert "Check how many seats are left on flight FL-AMSBCN-20261201-2." in step["prompt"]
        _, seats = await other.use("check_availability", flight_id=waitlist_inputs["FLIGHT_ID"])
        ok = seats["flight_id"] == waitlist_inputs["FLIGHT_ID"]
        answer = await other.mcp(
            "report_step_result", **report(step, ok, [ok], {"AVAILABLE": seats["available"]})
        )
        step = answer["next_step"]
        assert step["inputs"]["AVAILABLE"] is seats["available"]
        tool = "create_booking" if seats["available"] else "add_to_waitlist"
        _, made = await other.use(tool, flight_id=waitlist_inputs["FLIGHT_ID"], passenger="Grace")
        answer = await other.mcp(
            "report_step_result", **report(step, True, [True, True], {"REFERENCE": made["id"]})
        )
        assert answer["workflow_status"] == "completed"

    await asyncio.gather(run_flight(), run_waitlist())
    mine, theirs = await model.mcp("get_workflow_state"), await other.mcp("get_workflow_state")
    assert mine["workflow"]["title"] == "Book a flight" and theirs["workflow"]["step_count"] == 2
    assert "REFERENCE" in theirs["variables"] and "REFERENCE" not in mine["variables"]
    assert mine["variables"]["PASSENGER"] == "Ada" and theirs["variables"]["PASSENGER"] == "Grace"
    assert mine["session_id"] != theirs["session_id"]


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
async def test_a_restart_in_the_middle_loses_nothing(
    database: str,
    request: pytest.FixtureRequest,
    sqlite_url: str,
    markdown_root: Path,
    tools: ToolRegistry,
    travel: httpx.AsyncClient,
) -> None:
    url, schema = (
        (sqlite_url, None) if database == "sqlite" else request.getfixturevalue("pg_schema")
    )
    engine, service = open_service(url, markdown_root, schema)
    before = Model(service, tools, travel)
    await before.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    step = await before.mcp("execute_workflow_step")
    answer = await before.mcp("report_step_result", **await play_book_flight_step(before, step))
    prompt = answer["next_step"]["prompt"]
    engine.dispose()  # the server stops

    engine, service = open_service(url, markdown_root, schema)  # a new server process
    try:
        # The client reconnects: a new MCP session, the workflow's session_id passed along.
        after = Model(service, tools, travel, transport_session_id=uuid.uuid4().hex)
        with pytest.raises(Exception, match="no markdown workflow is loaded"):
            await after.mcp("get_workflow_state")
        sid = before.transport_session_id
        state = await after.mcp("get_workflow_state", session_id=sid)
        assert [s["status"] for s in state["steps"]] == ["passed", "in_progress", "not_started"]
        assert state["variables"]["FLIGHT_ID"] == answer["variables"]["FLIGHT_ID"]
        step = await after.mcp("execute_workflow_step", session_id=sid)
        assert step["prompt"] == prompt and step["attempt"] == 1
        while True:
            arguments = await play_book_flight_step(after, step)
            answer = await after.mcp("report_step_result", session_id=sid, **arguments)
            if answer["workflow_status"] != "running":
                break
            step = answer["next_step"]
        assert answer["workflow_status"] == "completed"
        assert answer["summary"]["passed"] == 3
    finally:
        engine.dispose()
