"""RunStore on SQLite and on PostgreSQL: run views from real interpreter runs, idempotent
replays, concurrent writers, filters and live subscriptions.

PostgreSQL is ``TEST_DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
each test gets its own schema, dropped afterwards. A server that does not answer fails the
tests, unless ``DT_NO_POSTGRES=1``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine

from dynamic_tools.engine.events import event_from_dict as typed
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools, Responses
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.errors import NotFoundError
from dynamic_tools.persistence.db import metadata, migrate, upgrade_with_alembic, utc_now
from dynamic_tools.persistence.run_store import RunRecord, RunStore
from tests.conftest import EXAMPLES
from tests.support.plans import DocumentRunner
from tests.support.waiting import until

FLIGHT = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
TRIP = {
    "origin": "AMS",
    "destination": "BCN",
    "checkin": "2026-12-01",
    "checkout": "2026-12-03",
    "passenger": "Ada",
}


def shown(record: RunRecord) -> dict[str, Any]:
    """The run as ``GET /runs/{run_id}`` shows it, its nodes as plain dicts."""
    view = record.view()
    view["nodes"] = {n: dataclasses.asdict(state) for n, state in view["nodes"].items()}
    return view


@pytest.fixture(scope="module")
def travel() -> WorkflowDocument:
    text = (EXAMPLES / "workflows" / "travel.yaml").read_text()
    return load_document(text, name="travel.yaml").document


def mocks(**overrides: Any) -> MockTools:
    answers: dict[str, Any] = {
        "search_flights": [
            {"id": "FL1", "airline": "KLM", "departure_time": "07:10", "price": 120.0},
            {"id": "FL2", "airline": "KLM", "departure_time": "12:40", "price": 99.0},
        ],
        "check_availability": {"seats_available": 4},
        "create_booking": {"id": "BK1", "status": "reserved"},
        "search_hotels": [{"id": "H1"}],
        "book_hotel": {"id": "HB1"},
        "confirm_trip": {"id": "TR1"},
        "process_payment": {"id": "PAY1", "status": "paid"},
    }
    return MockTools({**answers, **overrides})


async def run_through(
    store: RunStore,
    document: WorkflowDocument,
    workflow_id: str,
    params: dict[str, Any],
    tools: MockTools | None = None,
) -> str:
    run = await store.create_run(
        workflow_id=workflow_id, params=params, node_ids=list(document.workflows[workflow_id].graph)
    )
    interpreter = DocumentRunner(
        document, run_id=run.run_id, tools=tools or mocks(), steps=LocalSteps(), events=store
    )
    outcome = await interpreter.run(workflow_id, params)
    await store.record_outcome(run.run_id, outcome)
    return run.run_id


def test_migrations_create_exactly_the_tables_and_can_run_again(blank_engine: Engine) -> None:
    upgrade_with_alembic(blank_engine)
    migrate(blank_engine)
    with blank_engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


async def test_an_interpreter_run_is_recorded_with_per_node_state(
    store: RunStore, travel: WorkflowDocument
) -> None:
    run_id = await run_through(store, travel, "book_flight", FLIGHT)
    run = shown(await store.get_run(run_id))
    assert run["status"] == "succeeded" and run["error"] is None
    assert run["result"] == {"id": "BK1", "status": "reserved"}
    assert list(run["nodes"]) == [
        "search",
        "check",
        "decide",
        "reserve",
        "waitlist",
        "fail_booking",
    ]
    search = run["nodes"]["search"]
    assert search["status"] == "succeeded" and search["kind"] == "call"
    assert search["input"] == {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
    assert search["output"][1]["id"] == "FL2" and search["attempts"] == 1
    assert search["duration_ms"] is not None and search["duration_ms"] >= 0
    assert run["nodes"]["decide"]["output"] == {"goto": "reserve"}
    assert run["nodes"]["waitlist"]["status"] == "skipped"
    assert run["nodes"]["waitlist"]["error"] == "not activated"
    assert run["started_at"] and run["finished_at"] and run["duration_ms"] >= 0
    events = await store.events(run_id)
    assert [e.position for e in events] == list(range(1, len(events) + 1))
    assert events[0].type == "run_created" and events[-1].type == "run_succeeded"
    assert [e.type for e in await store.events(run_id, after=len(events) - 1)] == ["run_succeeded"]


async def test_retries_are_counted_on_the_node(store: RunStore, travel: WorkflowDocument) -> None:
    flaky = Responses([ToolResult(503, {"error": "busy"}), {"id": "BK2", "status": "reserved"}])
    run_id = await run_through(store, travel, "book_flight", FLIGHT, mocks(create_booking=flaky))
    reserve = shown(await store.get_run(run_id))["nodes"]["reserve"]
    assert reserve["status"] == "succeeded" and reserve["attempts"] == 2
    assert reserve["output"] == {"id": "BK2", "status": "reserved"}
    types = [e.type for e in await store.events(run_id)]
    assert "attempt_failed" in types and "retry_scheduled" in types


async def test_a_yield_waits_then_resumes(store: RunStore, travel: WorkflowDocument) -> None:
    run = await store.create_run(workflow_id="book_with_approval", params=FLIGHT)
    steps = LocalSteps()
    interpreter = DocumentRunner(
        travel, run_id=run.run_id, tools=mocks(), steps=steps, events=store
    )
    task = asyncio.create_task(interpreter.run("book_with_approval", FLIGHT))
    waiting = await store.wait_until(
        run.run_id, lambda r: r.status == "waiting_input", timeout_s=10
    )
    prompt = waiting.view()["waiting"]
    assert prompt["node_id"] == "present_options"
    assert prompt["message"].startswith("Found 2 flights (FL1 at 120.0 EUR first)")
    offered = prompt["expects"]["selected_flight_id"]
    assert offered["enum"] == ["FL1", "FL2"]
    assert [o["label"] for o in offered["options"]] == [
        "KLM at 07:10, 120.0 EUR",
        "KLM at 12:40, 99.0 EUR",
    ]
    assert waiting.nodes["present_options"].status == "waiting_input"
    steps.answer("yield:present_options", {"selected_flight_id": "FL2"})
    await task
    done = await store.get_run(run.run_id)
    assert done.status == "succeeded" and done.view()["waiting"] is None
    assert done.nodes["present_options"].output == {"selected_flight_id": "FL2"}
    types = [e.type for e in await store.events(run.run_id)]
    assert types.index("waiting_input") < types.index("resumed") < types.index("run_succeeded")


async def test_a_replayed_run_adds_nothing(store: RunStore, travel: WorkflowDocument) -> None:
    recorded = EventList()
    run = await store.create_run(workflow_id="book_flight", params=FLIGHT)
    interpreter = DocumentRunner(
        travel, run_id=run.run_id, tools=mocks(), steps=LocalSteps(), events=recorded
    )
    await interpreter.run("book_flight", FLIGHT)
    for event in recorded.events:
        await store.emit(typed(event))
    first = await store.get_run(run.run_id)
    for event in recorded.events:  # a replay: same seqs, later timestamps
        await store.emit(typed({**event, "at": utc_now().isoformat()}))
    again = await store.get_run(run.run_id)
    assert again.event_count == first.event_count == len(recorded.events) + 1
    assert again.nodes == first.nodes and again.status == "succeeded"


async def test_parallel_branches_keep_all_their_events(
    store: RunStore, travel: WorkflowDocument
) -> None:
    run_id = await run_through(store, travel, "book_trip", TRIP)
    run = await store.get_run(run_id)
    assert run.status == "succeeded"
    for node in ("flight_and_hotel/flight/search", "flight_and_hotel/hotel/search"):
        assert run.nodes[node].status == "succeeded"
        assert run.nodes[node].started_at is not None  # from the events, not only the outcome
    assert run.result == {"trip_id": "TR1", "flight_booking_id": "BK1", "hotel_booking_id": "HB1"}


async def test_concurrent_writers_lose_no_update(store: RunStore) -> None:
    run = await store.create_run(workflow_id="w", params={})
    events = [
        {"run_id": run.run_id, "seq": i, "type": "node_started", "node_id": f"n{i}", "kind": "call"}
        for i in range(1, 31)
    ]
    await asyncio.gather(*(store.emit(typed(e)) for e in events))
    stored = await store.get_run(run.run_id)
    assert stored.event_count == 31
    assert sorted(stored.nodes) == sorted(f"n{i}" for i in range(1, 31))
    assert sorted(e.position for e in await store.events(run.run_id)) == list(range(1, 32))


async def test_list_runs_filters_and_pages(store: RunStore) -> None:
    ids = []
    for workflow_id, final in (("a", "run_succeeded"), ("a", "run_failed"), ("b", None)):
        run = await store.create_run(workflow_id=workflow_id, params={"n": len(ids)})
        await store.emit(typed({"run_id": run.run_id, "seq": 1, "type": "run_started"}))
        if final:
            await store.emit(typed({"run_id": run.run_id, "seq": 2, "type": final, "error": None}))
        ids.append(run.run_id)
        await asyncio.sleep(0.01)
    everything, total = await store.list_runs()
    assert total == 3 and [r.run_id for r in everything] == ids[::-1]
    assert [r.run_id for r in (await store.list_runs(status="succeeded"))[0]] == [ids[0]]
    assert [r.run_id for r in (await store.list_runs(workflow_id="b"))[0]] == [ids[2]]
    assert (await store.list_runs(status="running"))[1] == 1
    middle = (await store.get_run(ids[1])).created_at
    assert [r.run_id for r in (await store.list_runs(since=middle))[0]] == [ids[2], ids[1]]
    assert [r.run_id for r in (await store.list_runs(until=middle))[0]] == [ids[0]]
    page, total = await store.list_runs(limit=1, offset=1)
    assert total == 3 and [r.run_id for r in page] == [ids[1]]
    assert (await store.list_runs(since=utc_now() + timedelta(days=1)))[1] == 0
    done = await store.get_run(ids[0])
    assert done.duration_ms is not None and done.summary()["duration_ms"] >= 0


async def test_subscribe_is_live_resumable_and_ends_at_the_terminal_event(
    store: RunStore,
) -> None:
    run = await store.create_run(workflow_id="w", params={})
    seen: list[str] = []

    async def follow() -> None:
        async for event in store.subscribe(run.run_id):
            if event is not None:
                seen.append(event.type)

    follower = asyncio.create_task(follow())
    await until(lambda: len(seen) >= 1, "the stream gives the stored event")
    assert seen == ["run_created"]
    await store.emit(typed({"run_id": run.run_id, "seq": 1, "type": "run_started"}))
    await store.emit(
        typed({"run_id": run.run_id, "seq": 2, "type": "node_started", "node_id": "x"})
    )
    await until(lambda: len(seen) >= 3, "the stream follows the new events")
    assert seen == ["run_created", "run_started", "node_started"]
    await store.emit(typed({"run_id": run.run_id, "seq": 3, "type": "run_succeeded", "result": 1}))
    await asyncio.wait_for(follower, 5)
    assert seen[-1] == "run_succeeded"
    replay = [e.type async for e in store.subscribe(run.run_id, after=2) if e is not None]
    assert replay == ["node_started", "run_succeeded"]
    assert [e async for e in store.subscribe(run.run_id, after=4)] == []


async def test_a_stream_follows_events_written_by_another_replica(engine: Engine) -> None:
    here, elsewhere = RunStore(engine, poll_interval_s=0.05), RunStore(engine)
    run = await here.create_run(workflow_id="w", params={})
    follower = asyncio.create_task(asyncio.wait_for(_types(here.subscribe(run.run_id, after=1)), 5))
    await asyncio.sleep(0.1)
    await elsewhere.emit(typed({"run_id": run.run_id, "seq": 1, "type": "run_started"}))
    await elsewhere.emit(typed({"run_id": run.run_id, "seq": 2, "type": "run_failed", "error": {}}))
    assert await follower == ["run_started", "run_failed"]


async def _types(stream: Any) -> list[str]:
    return [event.type async for event in stream if event is not None]


async def test_terminal_status_is_final_and_interruptions_fail_active_runs(
    store: RunStore,
) -> None:
    active = await store.create_run(workflow_id="w", params={})
    await store.emit(typed({"run_id": active.run_id, "seq": 1, "type": "run_started"}))
    ended = await store.create_run(workflow_id="w", params={})
    await store.emit(
        typed({"run_id": ended.run_id, "seq": 1, "type": "run_cancelled", "error": {}})
    )
    assert await store.interrupt_unfinished("restarted") == [active.run_id]
    failed = await store.get_run(active.run_id)
    assert failed.status == "failed" and failed.error == {
        "message": "restarted",
        "reason": "interrupted",
    }
    await store.emit(typed({"run_id": active.run_id, "seq": 2, "type": "run_started"}))
    assert (await store.get_run(active.run_id)).status == "failed"
    assert await store.finish(ended.run_id, "failed") is False
    assert (await store.get_run(ended.run_id)).status == "cancelled"


async def test_unknown_runs(store: RunStore) -> None:
    with pytest.raises(NotFoundError):
        await store.get_run("nope")
    with pytest.raises(NotFoundError):
        await store.events("nope")
    await store.emit(
        typed({"run_id": "nope", "seq": 1, "type": "run_started"})
    )  # dropped, no error
    assert (await store.list_runs())[1] == 0
