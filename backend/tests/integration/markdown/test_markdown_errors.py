"""Every error of the markdown workflow tools, raised through the service as a model meets it:
its type, the line it names, its suggestion, and that the call changed nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.errors import MarkdownWorkflowError
from dynamic_tools.markdown.state import MAX_ATTEMPTS
from tests.integration.markdown.conftest import FLIGHT_INPUTS, Model, play_book_flight_step

UNIT_FIXTURES = Path(__file__).resolve().parents[2] / "unit" / "markdown" / "fixtures"


async def fails(model: Model, tool: str, **arguments: Any) -> MarkdownWorkflowError:
    with pytest.raises(MarkdownWorkflowError) as caught:
        await model.mcp(tool, **arguments)
    return caught.value


async def revision(model: Model) -> int:
    assert model.transport_session_id is not None
    return await model.service.store.revision(model.transport_session_id)  # type: ignore[attr-defined,no-any-return]


async def test_no_workflow_loaded_for_each_tool_before_a_load(model: Model) -> None:
    for tool, arguments in [
        ("execute_workflow_step", {}),
        ("report_step_result", {"step_number": 0, "status": "passed"}),
        ("get_workflow_state", {}),
        ("reset_workflow", {}),
    ]:
        error = await fails(model, tool, **arguments)
        assert error.error_type == "no_workflow_loaded" and error.line is None
        assert "Call load_workflow first" in error.suggestion
    assert await revision(model) == 0


async def test_file_not_found_inside_outside_and_beside_the_registry(
    model: Model, markdown_root: Path, tmp_path: Path
) -> None:
    error = await fails(model, "load_workflow", path="markdown/missing.md")
    assert error.error_type == "file_not_found" and error.line is None
    assert "no such file" in error.message
    assert "markdown/book_flight.md" in error.suggestion
    assert "markdown/book_flight.md" in error.context["available"]

    outside = tmp_path / "outside.md"
    outside.write_text((markdown_root / "markdown" / "book_flight.md").read_text())
    for path in ("../outside.md", str(outside)):
        error = await fails(model, "load_workflow", path=path)
        assert error.error_type == "file_not_found"
        assert "outside the registry directory" in error.message
    (markdown_root / "markdown" / "link.md").symlink_to(outside)
    error = await fails(model, "load_workflow", path="markdown/link.md")
    assert "outside the registry directory" in error.message

    error = await fails(model, "load_workflow", path="tools/search_flights.yaml")
    assert "not a markdown file" in error.message
    assert await revision(model) == 0


@pytest.mark.parametrize(
    ("fixture", "error_type", "line"),
    [
        ("empty_workflow.md", "empty_workflow", 1),
        ("missing_tool_spec.md", "missing_tool_spec", 9),
        ("no_description.md", "invalid_format", 4),
    ],
)
async def test_format_errors_reach_the_model_with_their_line(
    model: Model, fixture: str, error_type: str, line: int
) -> None:
    content = (UNIT_FIXTURES / "invalid" / fixture).read_text()
    error = await fails(model, "load_workflow", content=content)
    assert (error.error_type, error.line) == (error_type, line)
    assert error.suggestion
    assert await revision(model) == 0


async def test_a_step_naming_a_tool_the_session_cannot_call_is_refused(model: Model) -> None:
    model.callable_tools = {"search_flights", "check_availability"}
    error = await fails(model, "load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    assert (error.error_type, error.line) == ("unknown_tool", 53)
    assert "step 'Reserve the seat' names tool 'create_booking'" in error.message
    assert error.violations == [
        {"step_number": 2, "step": "Reserve the seat", "tool": "create_booking", "line": 53}
    ]

    model.callable_tools = None  # every travel tool
    content = (model.service.registry_root / "markdown" / "book_flight.md").read_text()
    typo = content.replace("TOOL: create_booking", "TOOL: create_bookings")
    error = await fails(model, "load_workflow", content=typo, variables=FLIGHT_INPUTS)
    assert error.error_type == "unknown_tool" and error.line == 53
    assert "Did you mean 'create_booking' or" in error.suggestion
    assert await revision(model) == 0


async def test_a_variable_missing_at_load_or_in_a_report_is_refused(model: Model) -> None:
    inputs = {k: v for k, v in FLIGHT_INPUTS.items() if k != "PASSENGER"}
    error = await fails(model, "load_workflow", path="book_flight.md", variables=inputs)
    assert (error.error_type, error.line) == ("variable_missing", 50)
    assert "'PASSENGER' needed by step 'Reserve the seat'" in error.message
    assert 'variables {"PASSENGER": ...}' in error.suggestion
    nulled = {**FLIGHT_INPUTS, "DATE": None}
    error = await fails(model, "load_workflow", path="book_flight.md", variables=nulled)
    assert (error.context["variable"], error.line) == ("DATE", 10)
    assert await revision(model) == 0

    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    step = await model.mcp("execute_workflow_step")
    arguments = await play_book_flight_step(model, step)
    del arguments["output_variables"]["FLIGHT_ID"]
    before = await revision(model)
    error = await fails(model, "report_step_result", **arguments)
    assert (error.error_type, error.line) == ("variable_missing", 22)
    assert "result[0].id → FLIGHT_ID" in error.suggestion
    assert await revision(model) == before
    state = await model.mcp("get_workflow_state")
    assert state["steps"][0]["status"] == "in_progress" and "PRICE" not in state["variables"]

    arguments["output_variables"]["flight_id"] = "FL-X"  # declared names match ignoring case
    answer = await model.mcp("report_step_result", **arguments)
    assert answer["variables"]["FLIGHT_ID"] == "FL-X"


async def test_steps_reported_or_executed_out_of_order_are_refused(model: Model) -> None:
    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    error = await fails(model, "report_step_result", step_number=1, status="passed")
    assert (error.error_type, error.line) == ("step_out_of_order", 8)
    assert "the step at hand is step 0 ('Search flights', line 8), not started" in error.message
    assert error.context == {"step_number": 1, "expected_step_number": 0}
    assert "report_step_result with step_number=0" in error.suggestion
    error = await fails(model, "execute_workflow_step", step_number=2)
    assert error.error_type == "step_out_of_order" and error.line == 8
    error = await fails(model, "report_step_result", step_number=9, status="failed")
    assert "which does not exist (steps 0-2)" in error.message
    assert await revision(model) == 1

    step = await model.mcp("execute_workflow_step", step_number=0)
    while True:
        answer = await model.mcp("report_step_result", **await play_book_flight_step(model, step))
        if answer["workflow_status"] == "completed":
            break
        step = answer["next_step"]
    error = await fails(model, "report_step_result", step_number=2, status="passed")
    assert error.error_type == "step_out_of_order" and error.line is None
    assert "completed" in error.message and "reset_workflow" in error.suggestion


async def test_invalid_requests_name_the_problem_and_change_nothing(model: Model) -> None:
    error = await fails(model, "load_workflow")
    assert error.error_type == "invalid_request" and "exactly one of" in error.message
    error = await fails(model, "load_workflow", path="book_flight.md", content="# x")
    assert error.error_type == "invalid_request"
    error = await fails(model, "load_workflow", path=3)
    assert error.message.startswith("load_workflow: path: 3 is not of type 'string'")
    error = await fails(model, "get_workflow_state", verbose=True)
    assert "Additional properties are not allowed ('verbose'" in error.message

    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    error = await fails(model, "report_step_result", step_number=0, status="ok")
    assert error.message.startswith("report_step_result: status: 'ok' is not one of")
    error = await fails(
        model,
        "report_step_result",
        step_number=0,
        status="passed",
        assertion_results=[{"assertion": "x", "passed": True}],
        output_variables={"FLIGHT_ID": "F", "PRICE": 1},
    )
    assert error.error_type == "invalid_request" and error.line == 27
    assert "has 2 assertion(s); the report has 1 result(s)" in error.message
    assert "2. Every flight returned goes from [ORIGIN] to [DESTINATION]" in error.suggestion
    assert await revision(model) == 1

    model.transport_session_id = None  # a client without an MCP session
    error = await fails(model, "get_workflow_state")
    assert error.error_type == "invalid_request" and "Pass 'session_id'" in error.suggestion
    error = await fails(model, "get_workflow_state", session_id="no spaces allowed")
    assert error.error_type == "invalid_request"


async def test_a_step_gets_a_bounded_number_of_attempts(model: Model) -> None:
    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    failed = {
        "step_number": 0,
        "status": "failed",
        "error_message": "the API is down",
        "assertion_results": [{"assertion": "a", "passed": False}] * 2,
    }
    for attempt in range(1, MAX_ATTEMPTS + 1):
        step = await model.mcp("execute_workflow_step")
        assert step["attempt"] == attempt
        answer = await model.mcp("report_step_result", **failed)
        assert answer["recorded"]["error_message"] == "the API is down"
    assert "all 5 attempts" in answer["next_action"]
    error = await fails(model, "execute_workflow_step")
    assert error.error_type == "invalid_request" and error.line == 8
    assert f"failed {MAX_ATTEMPTS} times" in error.message and "reset_workflow" in error.suggestion
    await model.mcp("reset_workflow")
    assert (await model.mcp("execute_workflow_step"))["attempt"] == 1


async def test_session_ids_keep_workflows_apart_and_a_load_replaces_one(model: Model) -> None:
    await model.mcp("load_workflow", path="book_flight.md", variables=FLIGHT_INPUTS)
    side = await model.mcp(
        "load_workflow",
        session_id="side-run",
        path="waitlist_or_book.md",
        variables={"FLIGHT_ID": "FL-1", "PASSENGER": "Ada"},
    )
    assert side["session_id"] == "side-run" and side["replaced"] is None
    assert (await model.mcp("get_workflow_state"))["workflow"]["title"] == "Book a flight"
    replaced = await model.mcp(
        "load_workflow", path="waitlist_or_book.md", variables={"FLIGHT_ID": "F", "PASSENGER": "B"}
    )
    assert replaced["replaced"] == "Book a flight"
    state = await model.mcp("get_workflow_state")
    assert state["workflow"]["title"] == "Book a seat, or join the waitlist"
    assert state["variables"] == {"FLIGHT_ID": "F", "PASSENGER": "B"}
