"""RunStore observers (what telemetry is fed by): every stored event once, by any path, with
the run as it is after it; never a replayed duplicate; a failing observer never breaks the
store. And the counts of unfinished runs a metrics scrape reads. SQLite and PostgreSQL."""

from __future__ import annotations

from loguru import logger

from dynamic_tools.engine.events import event_from_dict as typed
from dynamic_tools.persistence.run_store import RunStore, StoredEvent


async def test_observers_see_each_stored_event_once_with_the_run_after_it(
    store: RunStore,
) -> None:
    seen: list[StoredEvent] = []
    store.observe(seen.append)
    run = await store.create_run(workflow_id="wf", params={}, node_ids=["a"])
    started = {"run_id": run.run_id, "seq": 1, "type": "run_started", "workflow_id": "wf"}
    node = {"run_id": run.run_id, "seq": 2, "type": "node_started", "node_id": "a"}
    for event in (started, node, started, node):  # a replay emits them again
        await store.emit(typed({**event, "kind": "call", "tool": "t"} if event is node else event))
    await store.finish(run.run_id, "cancelled", {"message": "stop"})
    await store.finish(run.run_id, "cancelled", {"message": "again"})  # already ended
    assert [s.event.type for s in seen] == [
        "run_created",
        "run_started",
        "node_started",
        "run_cancelled",
    ]
    assert [s.previous_status for s in seen] == ["pending", "pending", "running", "running"]
    assert [s.run.status for s in seen] == ["pending", "running", "running", "cancelled"]
    assert seen[2].run.nodes["a"].tool == "t" and seen[2].run.nodes["a"].kind == "call"
    assert [s.ended_run for s in seen] == [False, False, False, True]
    assert seen[3].run.finished_at is not None and seen[3].run.workflow_id == "wf"


async def test_a_failing_observer_is_logged_and_changes_nothing(store: RunStore) -> None:
    def broken(stored: StoredEvent) -> None:
        raise RuntimeError("boom")

    seen: list[str] = []
    warnings: list[str] = []
    store.observe(broken)
    store.observe(lambda s: seen.append(s.event.type))
    sink = logger.add(lambda m: warnings.append(str(m)), level="WARNING")
    try:
        run = await store.create_run(workflow_id="wf", params={})
        await store.emit(typed({"run_id": run.run_id, "seq": 1, "type": "run_started"}))
        await store.flush()  # observers are told once the event is stored
    finally:
        logger.remove(sink)
    assert seen == ["run_created", "run_started"]
    assert (await store.get_run(run.run_id)).status == "running"
    assert any("observer failed on run_started (RuntimeError)" in w for w in warnings)


async def test_unfinished_counts_by_workflow_and_status(store: RunStore) -> None:
    assert store.unfinished_counts() == []
    runs = [await store.create_run(workflow_id=w, params={}) for w in ("a", "a", "b", "b")]
    await store.emit(typed({"run_id": runs[0].run_id, "seq": 1, "type": "run_started"}))
    await store.emit(typed({"run_id": runs[1].run_id, "seq": 1, "type": "run_started"}))
    waiting = {"type": "waiting_input", "node_id": "ask", "message": "?", "expects": {}}
    await store.emit(typed({"run_id": runs[1].run_id, "seq": 2, **waiting}))
    await store.finish(runs[2].run_id, "failed", {"message": "x"})
    assert sorted(store.unfinished_counts()) == [
        ("a", "running", 1),
        ("a", "waiting_input", 1),
        ("b", "pending", 1),
    ]
