"""The run store at the journal's floor: events written behind, in batches, per node.

- An event costs the same number of statements in a run of 10 nodes and in one of 1,000
  (its node's row, not the run's node map), and a batch of events costs a fixed handful of
  statements per run, not a handful per event.
- ``emit`` never waits for the database; every read waits for what was emitted before it;
  a batch the database refuses is stored event by event, so one bad event costs only itself.
- Migration 0005 moves the node maps of existing runs into ``run_nodes``, in order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Engine, event, select, text
from sqlalchemy.exc import IntegrityError

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.state import NodeState
from dynamic_tools.persistence import run_store as run_store_module
from dynamic_tools.persistence.db import (
    alembic_config,
    make_engine,
    migrate,
    runs,
    write_transaction,
)
from dynamic_tools.persistence.event_batch import append_events
from dynamic_tools.persistence.run_store import RunStore


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement.split()[0].upper())

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def node_events(run_id: str, nodes: list[str], first_seq: int) -> list[ev.Event]:
    out: list[ev.Event] = []
    for node_id in nodes:
        out.append(ev.NodeStarted(node_id=node_id, kind="call", tool="t"))
        out.append(ev.NodeSucceeded(node_id=node_id, output={"ok": True}, input={}))
    return [
        e.stamped(run_id=run_id, seq=seq, at="2026-11-24T00:00:00+00:00")
        for seq, e in enumerate(out, start=first_seq)
    ]


async def statements_for_one_event(store: RunStore, size: int) -> list[str]:
    nodes = [f"n{i}" for i in range(size)]
    run = await store.create_run(workflow_id="w", params={}, node_ids=nodes)
    for e in node_events(run.run_id, nodes[:-1], 1):
        await store.emit(e)
    await store.flush()
    last = node_events(run.run_id, nodes[-1:], 2 * size)[0]
    with statements(store.engine) as seen:
        await store.emit(last)
        await store.flush()
    return seen


async def test_an_event_costs_the_same_statements_at_10_and_at_1000_nodes(
    store: RunStore,
) -> None:
    small = await statements_for_one_event(store, 10)
    large = await statements_for_one_event(store, 1000)
    assert small == large
    # The run's row and the node's state; the stored keys are not read for a run this store
    # created, whose every stored seq it knows.
    assert small.count("SELECT") == 2
    assert small.count("UPDATE") == 2  # the node's row, the run's row


async def test_a_batch_costs_a_fixed_handful_of_statements_per_run(store: RunStore) -> None:
    nodes = [f"n{i}" for i in range(200)]
    run = await store.create_run(workflow_id="w", params={}, node_ids=nodes)
    batch = node_events(run.run_id, nodes, 1)
    with statements(store.engine) as seen, write_transaction(store.engine) as conn:
        stored = append_events(conn, batch)
    assert all(s is not None for s in stored) and len(stored) == 400
    data = [s for s in seen if s in ("SELECT", "INSERT", "UPDATE")]
    assert len(data) <= 6, seen  # run, keys, nodes; events, node rows, run
    after = await store.get_run(run.run_id)
    assert after.event_count == 401
    assert list(after.nodes) == nodes  # the graph's order is kept
    assert all(n.status == "succeeded" for n in after.nodes.values())


async def test_emit_never_waits_for_the_database_and_reads_see_what_was_emitted(
    store: RunStore,
) -> None:
    run = await store.create_run(workflow_id="w", params={}, node_ids=["a"])
    started = ev.RunStarted(workflow_id="w").stamped(run_id=run.run_id, seq=1, at="")
    with write_transaction(store.engine) as conn:  # another writer holds the run
        conn.execute(select(runs.c.status).where(runs.c.run_id == run.run_id).with_for_update())
        await asyncio.wait_for(store.emit(started), 1)  # queued: returns while it is held
    assert (await store.get_run(run.run_id)).status == "running"
    events = await store.events(run.run_id)
    assert [e.type for e in events] == ["run_created", "run_started"]


async def test_events_from_many_runs_and_threads_are_all_stored(store: RunStore) -> None:
    runs = [await store.create_run(workflow_id="w", params={}, node_ids=["a"]) for _ in range(5)]

    def emit_from_a_thread(run_id: str) -> None:
        async def go() -> None:
            for e in node_events(run_id, [f"x{i}" for i in range(20)], 1):
                await store.emit(e)

        asyncio.run(go())

    await asyncio.gather(*(asyncio.to_thread(emit_from_a_thread, r.run_id) for r in runs))
    for run in runs:
        assert (await store.get_run(run.run_id)).event_count == 41


async def test_a_batch_that_fails_is_stored_event_by_event(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = await store.create_run(workflow_id="w", params={}, node_ids=["a", "b"])
    batch = node_events(run.run_id, ["a", "b"], 1)
    sizes: list[int] = []

    def refusing_batches(conn: Any, events: Any, *marks: Any) -> Any:
        sizes.append(len(events))
        if len(events) > 1:  # e.g. a duplicate key another process wrote meanwhile
            raise IntegrityError("INSERT", {}, Exception("duplicate key"))
        return append_events(conn, events, *marks)

    monkeypatch.setattr(run_store_module, "append_events", refusing_batches)
    await asyncio.to_thread(store._write_batch, batch)
    assert sizes == [4, 1, 1, 1, 1]
    types = [(e.type, e.seq) for e in await store.events(run.run_id)]
    assert types[1:] == [
        ("node_started", 1),
        ("node_succeeded", 2),
        ("node_started", 3),
        ("node_succeeded", 4),
    ]


async def test_events_another_store_wrote_meanwhile_are_kept_once(engine: Engine) -> None:
    """Two replicas' stores on one database: the store that created the run skips reading the
    stored keys, so another store's events for it surface as a refused batch, stored event by
    event: each seq ends up stored once."""
    here, there = RunStore(engine), RunStore(engine)
    try:
        run = await here.create_run(workflow_id="w", params={}, node_ids=["a", "b", "c"])
        for e in node_events(run.run_id, ["a", "b"], 1):  # seqs 1-4, written by the other
            await there.emit(e)
        await there.flush()
        with statements(engine) as seen:
            for e in node_events(run.run_id, ["b", "c"], 3):  # seqs 3-6: 3 and 4 are stored
                await here.emit(e)
            await here.flush()
        assert seen.count("INSERT") > 1  # the batch was refused, then stored event by event
        events = await here.events(run.run_id)
        assert [(e.type, e.seq) for e in events][1:] == [
            ("node_started", 1),
            ("node_succeeded", 2),
            ("node_started", 3),
            ("node_succeeded", 4),
            ("node_started", 5),
            ("node_succeeded", 6),
        ]
        assert (await here.get_run(run.run_id)).event_count == 7
    finally:
        await here.aclose()
        await there.aclose()


def test_migration_0005_moves_node_maps_into_rows(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    with write_transaction(engine) as conn:
        command.upgrade(alembic_config(conn), "0004")
    nodes = {"search": {"status": "succeeded", "attempts": 1}, "book": {"status": "pending"}}
    with write_transaction(engine) as conn:
        conn.execute(
            text(
                "INSERT INTO runs (run_id, workflow_id, status, params, nodes, event_count, "
                "created_at, updated_at) VALUES ('r1', 'w', 'running', '{}', :nodes, 3, "
                "'2026-11-24 00:00:00', '2026-11-24 00:00:00')"
            ),
            {"nodes": json.dumps(nodes)},
        )
    migrate(engine)
    store = RunStore(engine)
    run = asyncio.run(store.get_run("r1"))
    assert list(run.nodes) == ["search", "book"]
    assert run.nodes["search"] == NodeState(status="succeeded", attempts=1)
    with engine.connect() as conn:
        columns = [row[1] for row in conn.execute(text("PRAGMA table_info(runs)"))]
    assert "nodes" not in columns
    engine.dispose()
