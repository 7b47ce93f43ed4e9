"""Durable fan-outs of calls run in place: one DBOS step, items journaled, stops as before.

A ``foreach`` or ``parallel`` whose every child is one call runs its children inside the
run's own workflow (``execution/fan_out.py``). These tests check, on SQLite and PostgreSQL,
that it makes no child workflow and records one step, that a recovered fan-out starts only
the items the item journal does not have, and that cancel, a failed item and the workflow's
timeout still undo what the finished items booked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from dbos import DBOS

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.execution.durable_config import DurableConfig
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.item_journal import ItemJournal
from dynamic_tools.persistence.run_store import RunStore
from tests.integration.execution.conftest import Launch
from tests.support.plans import prepared
from tests.support.waiting import until

DOCUMENT = """
domain: in_place
workflows:
  book_each:
    params: { flights: { type: list, required: true } }
    graph:
      each:
        type: foreach
        items: $flights
        as: flight
        max_iterations: 20
        concurrency: 3
        output: bookings
        step:
          call: create_booking
          args: { flight_id: $flight }
          output: booking
          compensate_with: { call: cancel_booking, args: { booking_id: $booking.id } }
  book_each_by:
    timeout: 2
    params: { flights: { type: list, required: true } }
    graph:
      each:
        type: foreach
        items: $flights
        as: flight
        max_iterations: 20
        step:
          call: create_booking
          args: { flight_id: $flight }
          output: booking
          compensate_with: { call: cancel_booking, args: { booking_id: $booking.id } }
  both:
    graph:
      pair:
        type: parallel
        branches:
          out: { call: create_booking, args: { flight_id: F-OUT } }
          back: { call: create_booking, args: { flight_id: F-BACK } }
  both_or_not:
    graph:
      pair:
        type: parallel
        on_partial_failure: continue
        branches:
          out: { call: create_booking, args: { flight_id: F-OUT } }
          back: { call: create_booking, args: { flight_id: Z-BACK } }
"""


def document() -> WorkflowDocument:
    return load_document(DOCUMENT, name="in_place.yaml").document


class FlightTools:
    """``create_booking``: flights starting with H hang until cancelled, X fails once an H
    flight hangs, Z fails at once, any other is booked as ``BK-<flight>``; ``cancel_booking``
    undoes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str]] = []
        self.hanging = 0
        self.changed = asyncio.Event()

    def knows(self, tool: str) -> bool:
        return True

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        self.calls.append((tool, dict(args), idempotency_key))
        if tool == "cancel_booking":
            return ToolResult(200, {"id": args["booking_id"], "status": "cancelled"})
        flight = str(args["flight_id"])
        if flight.startswith("H"):
            self.hanging += 1
            self.changed.set()
            await asyncio.Event().wait()
        if flight.startswith("Z"):
            return ToolResult(400, {"error": "no such flight"})
        if flight.startswith("X"):
            while not self.hanging:
                self.changed.clear()
                await self.changed.wait()
            return ToolResult(400, {"error": "sold out"})
        return ToolResult(201, {"id": f"BK-{flight}"})

    async def until(self, booked: int, hanging: int) -> None:
        async def wait() -> None:
            while len(self.booked()) < booked or self.hanging < hanging:
                self.changed.clear()
                await asyncio.sleep(0.01)

        await asyncio.wait_for(wait(), 30)

    def booked(self) -> list[str]:
        return [
            c[1]["flight_id"]
            for c in self.calls
            if c[0] == "create_booking" and not str(c[1]["flight_id"]).startswith(("H", "X"))
        ]

    def undone(self) -> list[str]:
        return [c[1]["booking_id"] for c in self.calls if c[0] == "cancel_booking"]


def journal_count(engine: Any) -> int:
    """How many items of the run 'again' the item journal holds."""
    with engine.connect() as conn:
        query = sa.text("SELECT count(*) FROM run_items WHERE run_id='again'")
        return int(conn.execute(query).scalar_one())


async def step_names(workflow_id: str) -> list[str]:
    return [s["function_name"] for s in await DBOS.list_workflow_steps_async(workflow_id)]


async def test_a_foreach_of_calls_is_one_step_without_child_workflows(
    config: DurableConfig, launch: Launch
) -> None:
    tools = FlightTools()
    launcher = await launch(config, tools)
    flights = [f"F{i}" for i in range(7)]
    await launcher.start(run_id="each", **prepared(document(), "book_each", {"flights": flights}))
    outcome = await launcher.wait("each")

    assert outcome.status == "succeeded", outcome.error
    assert outcome.nodes["each"].output == [{"id": f"BK-F{i}"} for i in range(7)]
    assert [outcome.nodes[f"each/{i}"].input for i in range(7)] == [
        {"flight_id": f"F{i}"} for i in range(7)
    ]
    assert [outcome.nodes[f"each/{i}"].status for i in range(7)] == ["succeeded"] * 7
    assert outcome.nodes["each/3"].output == {"id": "BK-F3"}
    assert await DBOS.list_workflows_async(parent_workflow_id="each") == []
    assert await step_names("each") == ["foreach:each"]
    assert sorted(c[2] for c in tools.calls) == sorted(f"each:each/{i}" for i in range(7))


async def test_a_parallel_of_calls_is_one_step_too(config: DurableConfig, launch: Launch) -> None:
    launcher = await launch(config, FlightTools())
    await launcher.start(run_id="pair", **prepared(document(), "both", {}))
    outcome = await launcher.wait("pair")

    assert outcome.status == "succeeded", outcome.error
    assert outcome.nodes["pair"].output == {"out": {"id": "BK-F-OUT"}, "back": {"id": "BK-F-BACK"}}
    assert await step_names("pair") == ["parallel:pair"]


async def test_a_parallel_that_goes_on_after_a_failed_branch_runs_in_place(
    config: DurableConfig, launch: Launch
) -> None:
    launcher = await launch(config, FlightTools())
    await launcher.start(run_id="partial", **prepared(document(), "both_or_not", {}))
    outcome = await asyncio.wait_for(launcher.wait("partial"), 30)

    assert outcome.status == "succeeded", outcome.error
    output = outcome.nodes["pair"].output
    assert output["out"] == {"id": "BK-F-OUT"}
    assert "back" in output["_failed"]
    assert await step_names("partial") == ["parallel:pair"]


async def test_cancel_during_an_in_place_foreach_undoes_the_finished_items(
    config: DurableConfig, launch: Launch
) -> None:
    tools = FlightTools()
    launcher = await launch(config, tools)
    flights = ["F0", "F1", "H2", "H3", "H4", "F5"]
    await launcher.start(run_id="stop", **prepared(document(), "book_each", {"flights": flights}))
    await tools.until(booked=2, hanging=3)  # F5 waits for a slot (concurrency 3)

    await launcher.cancel("stop")
    outcome = await asyncio.wait_for(launcher.wait("stop"), 60)

    assert outcome.status == "cancelled"
    assert tools.undone() == ["BK-F1", "BK-F0"]
    assert "F5" not in tools.booked()
    assert await step_names("stop") == [
        "foreach:each",
        "compensate:saga:each/1",
        "compensate:saga:each/0",
    ]
    recorded = (await DBOS.list_workflow_steps_async("stop"))[0]["output"]
    assert recorded["cancelled"] is True
    assert [o["error"] for o in recorded["outcomes"]][2:] == [
        "cancelled: the run was cancelled",
        "cancelled: the run was cancelled",
        "cancelled: the run was cancelled",
        "cancelled before it started",
    ]


async def test_a_failed_item_stops_the_running_ones_and_the_booked_are_undone(
    config: DurableConfig, launch: Launch
) -> None:
    tools = FlightTools()
    launcher = await launch(config, tools)
    flights = ["F0", "H1", "X2", "F3"]
    await launcher.start(run_id="fail", **prepared(document(), "book_each", {"flights": flights}))
    outcome = await asyncio.wait_for(launcher.wait("fail"), 60)

    assert outcome.status == "failed"
    assert outcome.error["message"] == (
        "foreach 'each' item 1 failed: cancelled: another child failed"
    )
    assert outcome.nodes["each/2"].detail["body"] == {"error": "sold out"}
    assert outcome.nodes["each/2"].status == "failed"
    assert outcome.nodes["each/1"].status == "cancelled"
    assert tools.undone() == ["BK-F0"]
    assert "F3" not in tools.booked()  # nothing starts after the failure


async def test_the_workflow_timeout_during_an_in_place_foreach_undoes_the_finished_items(
    config: DurableConfig, launch: Launch
) -> None:
    tools = FlightTools()
    launcher = await launch(config, tools)
    flights = ["F0", "H1", "F2"]
    await launcher.start(
        run_id="late", **prepared(document(), "book_each_by", {"flights": flights})
    )
    outcome = await asyncio.wait_for(launcher.wait("late"), 60)

    assert outcome.status == "failed"
    assert outcome.error["message"] == "the workflow timed out after 2.0 s"
    assert sorted(tools.undone()) == ["BK-F0", "BK-F2"]
    names = await step_names("late")
    assert names[0] == "workflow:started_at"
    assert "foreach:each" not in names  # a timeout is not recorded as the fan-out's result


async def test_a_relaunch_mid_fan_out_runs_only_the_items_not_journaled(
    config: DurableConfig, launch: Launch, tmp_path: Any
) -> None:
    """Shut down while one item hangs: the next launch takes the finished items from the
    item journal and calls only the one that was in flight (same idempotency key)."""
    store_schema = f"{config.schema}_runs"
    if config.is_sqlite:
        engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite'}")
    else:
        with make_engine(config.database_url).begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{store_schema}"'))
        engine = make_engine(config.database_url, schema=store_schema)
    migrate(engine)
    store = RunStore(engine)
    journal = ItemJournal(engine)
    flights = ["F0", "F1", "H2", "F3"]
    plan = prepared(document(), "book_each", {"flights": flights})
    run = await store.create_run(
        workflow_id="book_each", params=plan["params"], node_ids=["each"], run_id="again"
    )
    try:
        tools = FlightTools()
        launcher = await launch(config, tools, store, journal)
        await launcher.start(run_id=run.run_id, **plan)
        await tools.until(booked=3, hanging=1)
        await until(lambda: journal_count(engine) == 3, "the finished items' group commits")
        await launcher.shutdown()
        with engine.connect() as conn:
            journaled = sorted(
                row[0]
                for row in conn.execute(sa.text("SELECT item FROM run_items WHERE run_id='again'"))
            )
        assert journaled == [0, 1, 3]

        again = FlightTools()
        relaunched = await launch(config, again, store, journal)
        await again.until(booked=0, hanging=1)
        assert [c[2] for c in again.calls] == ["again:each/2"]  # only the one in flight
        await relaunched.cancel(run.run_id)
        outcome = await asyncio.wait_for(relaunched.wait(run.run_id), 60)
        assert outcome.status == "cancelled"
        assert again.undone() == ["BK-F3", "BK-F1", "BK-F0"]
        with engine.connect() as conn:
            left = conn.execute(sa.text("SELECT count(*) FROM run_items")).scalar_one()
        assert left == 0  # the fan-out's outcome is journaled: its items are dropped
    finally:
        await store.aclose()
        engine.dispose()
        if not config.is_sqlite:
            with make_engine(config.database_url).begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{store_schema}" CASCADE'))


async def test_a_launcher_without_an_item_journal_still_runs_fan_outs(
    config: DurableConfig, launch: Launch
) -> None:
    events = EventList()
    launcher = await launch(config, FlightTools(), events)
    await launcher.start(run_id="plain", **prepared(document(), "book_each", {"flights": ["F0"]}))
    outcome = await launcher.wait("plain")
    assert outcome.status == "succeeded", outcome.error
