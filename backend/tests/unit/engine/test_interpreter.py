"""The interpreter on the travel examples and edge-case fixtures, with mock tools (no I/O)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools, Responses
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.ports import ToolCallFailed, ToolResult
from dynamic_tools.errors import InvalidInputError
from tests.conftest import EXAMPLES, FIXTURES
from tests.support.plans import DocumentRunner

TRAVEL = EXAMPLES / "workflows" / "travel.yaml"
EDGES = FIXTURES / "workflows" / "engine" / "saga_and_edges.yaml"
FLIGHTS = [
    {"id": f"FL-AMSBCN-20261201-{i}", "airline": "KLM", "departure_time": t, "price": p}
    for i, t, p in ((1, "07:10", 180.0), (2, "12:40", 95.5), (3, "18:05", 120.0))
]
BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def doc(path: Path) -> WorkflowDocument:
    return load_document(path.read_text(), name=path.name).document


def travel_mocks(**overrides: Any) -> dict[str, Any]:
    mocks: dict[str, Any] = {
        "search_flights": FLIGHTS,
        "check_availability": {"seats_available": 4, "available": True},
        "create_booking": lambda a: ToolResult(201, {"id": "BK-000001", **a, "status": "reserved"}),
        "add_to_waitlist": {"id": "WL-000001", "position": 1},
        "process_payment": {"id": "PAY-000001", "status": "captured"},
        "search_hotels": [{"id": "HT-LIS-1"}],
        "book_hotel": {"id": "HB-000001", "status": "reserved"},
        "confirm_trip": {"id": "TRIP-000001", "status": "confirmed"},
        "cancel_booking": lambda a: {"id": a["booking_id"], "status": "cancelled"},
        "cancel_hotel": lambda a: {"id": a["booking_id"], "status": "cancelled"},
    }
    mocks.update(overrides)
    return mocks


class SlowTools(MockTools):
    """Every call takes a second (for timeouts)."""

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        await asyncio.sleep(1)
        return ToolResult(200, {})


def make(
    path: Path, mocks: Mapping[str, Any], run_id: str = "run-1"
) -> tuple[DocumentRunner, MockTools, LocalSteps, EventList]:
    tools, steps, events = MockTools(mocks), LocalSteps(), EventList()
    return (
        DocumentRunner(doc(path), run_id=run_id, tools=tools, steps=steps, events=events),
        tools,
        steps,
        events,
    )


async def test_book_flight_takes_the_available_branch() -> None:
    interp, tools, steps, events = make(TRAVEL, travel_mocks())
    outcome = await interp.run("book_flight", BOOK)
    assert outcome.status == "succeeded", outcome.error
    assert outcome.result["id"] == "BK-000001"
    assert [c[0] for c in tools.calls] == ["search_flights", "check_availability", "create_booking"]
    assert tools.calls[1][1] == {"flight_id": "FL-AMSBCN-20261201-1"}
    assert tools.calls[2][2] == "run-1:reserve"  # idempotency key: run id + node id
    assert steps.names == ["call:search:1", "call:check:1", "call:reserve:1"]
    nodes = outcome.nodes
    assert nodes["decide"].output == {"goto": "reserve"}
    assert (nodes["waitlist"].status, nodes["waitlist"].error) == ("skipped", "not activated")
    assert nodes["reserve"].input == {"flight_id": "FL-AMSBCN-20261201-1", "passenger": "Ada"}
    assert nodes["reserve"].attempts == 1 and nodes["reserve"].started_at
    assert events.events[0]["type"] == "run_started"
    assert events.events[-1]["type"] == "run_succeeded"
    assert [e["seq"] for e in events.events] == list(range(1, len(events.events) + 1))


async def test_a_sold_out_flight_goes_to_the_waitlist() -> None:
    interp, tools, *_ = make(
        TRAVEL, travel_mocks(check_availability={"seats_available": 0, "available": False})
    )
    outcome = await interp.run("book_flight", BOOK)
    assert outcome.status == "succeeded"
    assert outcome.result == {"id": "WL-000001", "position": 1}
    assert "create_booking" not in [c[0] for c in tools.calls]


async def test_retries_back_off_then_the_fallback_fails_the_run() -> None:
    interp, tools, steps, events = make(
        TRAVEL, travel_mocks(create_booking=ToolResult(503, {"error": "busy"}))
    )
    outcome = await interp.run("book_flight", BOOK)
    assert outcome.status == "failed"
    assert outcome.error == {
        "message": "Booking flight FL-AMSBCN-20261201-1 failed: create_booking failed after "
        "3 attempts: HTTP 503 Service Unavailable: busy",
        "node_id": "fail_booking",
        "cause": {  # the call whose failure activated the error node, in the API's words
            "node_id": "reserve",
            "call": "create_booking",
            "message": "create_booking failed after 3 attempts: HTTP 503 Service Unavailable: busy",
            "kind": "status",
            "status_code": 503,
            "api_message": "busy",
            "attempts": 3,
        },
    }
    assert outcome.nodes["waitlist"].status == "skipped"  # the branch chose reserve
    assert [c[0] for c in tools.calls].count("create_booking") == 3
    assert {c[2] for c in tools.calls if c[0] == "create_booking"} == {"run-1:reserve"}
    assert steps.sleeps == [("sleep:reserve:1", 0.2), ("sleep:reserve:2", 0.4)]
    assert outcome.nodes["reserve"].status == "failed" and outcome.nodes["reserve"].attempts == 3
    scheduled = events.of("retry_scheduled")
    assert [(e["attempt"], e["max_attempts"]) for e in scheduled] == [(2, 3), (3, 3)]


async def test_retry_after_is_honoured_and_4xx_is_not_retried() -> None:
    answers = Responses(
        [ToolResult(429, {}, {"Retry-After": "3"}), ToolResult(201, {"id": "BK-9"})]
    )
    interp, _, steps, _ = make(TRAVEL, travel_mocks(create_booking=answers))
    assert (await interp.run("book_flight", BOOK)).status == "succeeded"
    assert steps.sleeps == [("sleep:reserve:1", 3.0)]
    sold_out = ToolResult(409, {"error": {"code": "conflict", "message": "flight X is sold out"}})
    interp, tools, steps, _ = make(TRAVEL, travel_mocks(create_booking=sold_out))
    outcome = await interp.run("book_flight", BOOK)
    assert outcome.status == "failed" and steps.sleeps == []
    assert [c[0] for c in tools.calls].count("create_booking") == 1
    assert outcome.nodes["reserve"].attempts == 1
    assert outcome.nodes["reserve"].error == (
        "create_booking answered HTTP 409 Conflict: flight X is sold out"
    )
    assert outcome.error["message"].endswith("failed: " + outcome.nodes["reserve"].error)


async def test_book_trip_runs_both_sub_workflows_and_maps_outputs() -> None:
    interp, tools, steps, _ = make(TRAVEL, travel_mocks())
    params = {
        "origin": "AMS",
        "destination": "LIS",
        "checkin": "2026-12-01",
        "checkout": "2026-12-03",
        "passenger": "Ada",
    }
    outcome = await interp.run("book_trip", params)
    assert outcome.status == "succeeded", outcome.error
    assert outcome.result == {
        "trip_id": "TRIP-000001",
        "flight_booking_id": "BK-000001",
        "hotel_booking_id": "HB-000001",
    }
    confirm = next(c for c in tools.calls if c[0] == "confirm_trip")
    assert confirm[1] == {"flight_booking_id": "BK-000001", "hotel_booking_id": "HB-000001"}
    assert "flight_and_hotel/flight/reserve" in outcome.nodes
    assert outcome.nodes["flight_and_hotel/hotel/reserve"].status == "succeeded"
    assert "call:flight_and_hotel/flight/reserve:1" in steps.names


async def test_a_failed_branch_runs_the_compensate_node_once() -> None:
    interp, tools, *_ = make(TRAVEL, travel_mocks(book_hotel=ToolResult(500, {})))
    params = {
        "origin": "AMS",
        "destination": "LIS",
        "checkin": "2026-12-01",
        "checkout": "2026-12-03",
        "passenger": "Ada",
    }
    outcome = await interp.run("book_trip", params)
    assert outcome.status == "failed"
    assert "hotel failed" in outcome.error["message"]
    assert outcome.error["compensated_by"] == "rollback_all"
    cancels = [c for c in tools.calls if c[0].startswith("cancel")]
    assert cancels == [("cancel_booking", {"booking_id": "BK-000001"}, "run-1:rollback_all:0")]
    skipped = outcome.nodes["rollback_all"].output[1]["skipped"]
    assert skipped.startswith("cannot resolve $hotel_booking.id in node 'rollback_all'")
    assert "confirm_trip" not in [c[0] for c in tools.calls]


async def test_saga_compensations_run_newest_first() -> None:
    counter = iter(range(1, 10))
    interp, tools, *_ = make(
        EDGES,
        {
            "create_booking": lambda a: {"id": f"BK-{next(counter)}"},
            "cancel_booking": lambda a: {"status": "cancelled"},
        },
    )
    outcome = await interp.run("saga", {})
    assert outcome.status == "failed"
    assert outcome.error["message"] == "stopped after BK-1 and BK-2"
    assert [(c[0], c[1]) for c in tools.calls[2:]] == [
        ("cancel_booking", {"booking_id": "BK-2"}),
        ("cancel_booking", {"booking_id": "BK-1"}),
    ]
    interp, tools, *_ = make(EDGES, {"create_booking": {"id": "BK"}})
    assert (await interp.run("saga", {"fail": False})).status == "succeeded"


async def test_an_unresolvable_reference_names_the_reference_and_node() -> None:
    interp, *_ = make(EDGES, {"search_flights": FLIGHTS})
    outcome = await interp.run("bad_reference", {})
    assert outcome.status == "failed" and outcome.error["node_id"] == "check"
    assert "$flights.5.id" in outcome.error["message"]
    assert "out of range" in outcome.error["message"]


async def test_invalid_params_are_refused_before_a_run_with_every_field_named() -> None:
    # The one params check is the plan's, when the run is prepared: nothing runs.
    interp, tools, *_ = make(TRAVEL, travel_mocks())
    with pytest.raises(InvalidInputError) as refused:
        await interp.run("book_flight", {"origin": 3, "surprise": 1})
    assert interp.interpreter is None and tools.calls == []
    paths = {v["path"] for v in refused.value.violations}
    assert paths == {
        "params.origin",
        "params.destination",
        "params.date",
        "params.passenger",
        "params.surprise",
    }


async def test_continue_keeps_the_successful_branch() -> None:
    interp, *_ = make(
        EDGES, {"search_flights": FLIGHTS, "search_hotels": ToolCallFailed("connection refused")}
    )
    outcome = await interp.run("partial", {})
    assert outcome.status == "succeeded"
    both = outcome.nodes["both"].output
    assert both["good"] == FLIGHTS and "connection refused" in both["_failed"]["bad"]


async def test_success_criteria_and_foreach_bounds() -> None:
    interp, *_ = make(EDGES, {"check_availability": {"seats_available": 0}})
    outcome = await interp.run("checked", {})
    assert outcome.status == "failed" and "success criteria not met" in outcome.error["message"]
    interp, tools, *_ = make(EDGES, {"search_flights": FLIGHTS})
    outcome = await interp.run("too_many", {})
    assert "5 items, more than max_iterations 3" in outcome.error["message"]
    assert tools.calls == []


async def test_a_node_timeout_fails_the_call() -> None:
    interp = DocumentRunner(
        doc(EDGES), run_id="r", tools=SlowTools({}), steps=LocalSteps(), events=EventList()
    )
    outcome = await interp.run("slow", {})
    assert outcome.status == "failed" and "timed out after 0.05 s" in outcome.error["message"]


async def test_yield_pauses_until_answered_then_books_and_pays() -> None:
    interp, tools, steps, events = make(TRAVEL, travel_mocks())
    params = {k: BOOK[k] for k in ("origin", "destination", "date", "passenger")}
    task = asyncio.create_task(interp.run("book_with_approval", params))
    while not events.of("waiting_input"):
        await asyncio.sleep(0.001)
    waiting = events.of("waiting_input")[0]
    assert waiting["message"] == (
        "Found 3 flights (FL-AMSBCN-20261201-1 at 180.0 EUR first). "
        "Which one would you like to book?"
    )
    offered = waiting["expects"]["selected_flight_id"]
    assert offered["enum"] == [f["id"] for f in FLIGHTS]
    assert offered["options"][1] == {
        "value": "FL-AMSBCN-20261201-2",
        "label": "KLM at 12:40, 95.5 EUR",
        "item": FLIGHTS[1],
    }
    assert interp.nodes["present_options"].status == "waiting_input"
    steps.answer("yield:present_options", {"selected_flight_id": "FL-AMSBCN-20261201-2"})
    outcome = await task
    assert outcome.status == "succeeded", outcome.error
    booking = next(c for c in tools.calls if c[0] == "create_booking")
    assert booking[1]["flight_id"] == "FL-AMSBCN-20261201-2"
    assert outcome.result == {"id": "PAY-000001", "status": "captured"}


async def test_a_wrong_answer_fails_the_yield_and_cancel_compensates() -> None:
    interp, _, steps, _ = make(TRAVEL, travel_mocks())
    params = {k: BOOK[k] for k in ("origin", "destination", "date", "passenger")}
    task = asyncio.create_task(interp.run("book_with_approval", params))
    await asyncio.sleep(0.01)
    steps.answer("yield:present_options", {"selected_flight_id": 7})
    outcome = await task
    assert outcome.status == "failed"
    assert outcome.error["message"].startswith("invalid values: values.selected_flight_id")

    interp, tools, steps, events = make(
        EDGES, {"create_booking": {"id": "BK-1"}, "cancel_booking": {"status": "cancelled"}}
    )
    task = asyncio.create_task(interp.run("hold_then_confirm", {}))
    while not events.of("waiting_input"):
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events.events[-1]["type"] == "run_cancelled"
    assert tools.calls[-1][:2] == ("cancel_booking", {"booking_id": "BK-1"})


async def test_foreach_over_dates_then_sql_finds_the_cheapest() -> None:
    def search(args: Mapping[str, Any]) -> list[dict[str, Any]]:
        day = int(args["date"][-2:])
        return [
            {"id": f"FL-{day}-{i}", "date": args["date"], "price": 100 + day * 10 - i}
            for i in range(1, 4)
        ]

    interp, tools, steps, _ = make(TRAVEL, {"search_flights": search})
    params = {"origin": "AMS", "destination": "BCN", "start_date": "2026-12-01", "num_days": 3}
    outcome = await interp.run("find_cheapest_across_dates", params)
    assert outcome.status == "succeeded", outcome.error
    assert [c[1]["date"] for c in tools.calls] == ["2026-12-01", "2026-12-02", "2026-12-03"]
    assert [c[2] for c in tools.calls] == [f"run-1:search_loop/{i}" for i in range(3)]
    assert [len(day) for day in outcome.nodes["search_loop"].output] == [3, 3, 3]
    assert [row["id"] for row in outcome.result] == [
        "FL-1-3",
        "FL-1-2",
        "FL-1-1",
        "FL-2-3",
        "FL-2-2",
    ]
    assert outcome.result[0] == {"id": "FL-1-3", "date": "2026-12-01", "price": 107}
    assert "call:find_cheapest:1" in steps.names


async def test_event_numbers_stay_distinct_across_parallel_branches() -> None:
    interp, _, _, events = make(TRAVEL, travel_mocks())
    params = {
        "origin": "AMS",
        "destination": "LIS",
        "checkin": "2026-12-01",
        "checkout": "2026-12-03",
        "passenger": "Ada",
    }
    assert (await interp.run("book_trip", params)).status == "succeeded"
    numbers = [e["seq"] for e in events.events]
    assert len(numbers) == len(set(numbers))
    branches = {
        e["node_id"].split("/")[1]
        for e in events.events
        if e.get("node_id", "").startswith("flight_and_hotel/")
    }
    assert branches == {"flight", "hotel"}


async def test_the_workflow_deadline_is_recorded_so_a_replay_keeps_it() -> None:
    steps = LocalSteps()
    interp = DocumentRunner(
        doc(EDGES), run_id="r", tools=SlowTools({}), steps=steps, events=EventList()
    )
    outcome = await interp.run("deadline", {})
    assert outcome.status == "failed"
    assert outcome.error["message"] == "the workflow timed out after 0.05 s"
    assert steps.names[0] == "workflow:started_at"
