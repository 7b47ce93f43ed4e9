"""step_progress: a run's steps done, total and current step, from its graph's nodes."""

from __future__ import annotations

from typing import Any

from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_view import (
    RunRecord,
    StepProgress,
    node_from_row,
    step_progress,
)


def run(status: str, nodes: dict[str, dict[str, Any]], **extra: Any) -> RunRecord:
    now = utc_now()
    values: dict[str, Any] = {
        "run_id": "r1",
        "workflow_id": "w",
        "document_version": None,
        "status": status,
        "params": {},
        "result": None,
        "error": None,
        "nodes": {n: node_from_row(state) for n, state in nodes.items()},
        "waiting": {},
        "event_count": 0,
        "created_at": now,
        "updated_at": now,
        "started_at": now,
        "finished_at": None,
    }
    return RunRecord(**{**values, **extra})


def test_a_running_step_is_current_and_children_are_not_steps() -> None:
    nodes = {
        "search": {"status": "succeeded", "ended_at": "2026-01-01T00:00:01"},
        "loop": {"status": "running", "started_at": "2026-01-01T00:00:02"},
        "loop/0": {"status": "succeeded"},
        "loop/1": {"status": "running", "started_at": "2026-01-01T00:00:03"},
        "pay": {"status": "pending"},
    }
    assert step_progress(run("running", nodes)) == StepProgress(done=1, total=3, current="loop")


def test_a_waiting_run_is_at_its_yield_and_a_failed_run_at_its_failed_step() -> None:
    waiting = run(
        "waiting_input",
        {"search": {"status": "succeeded"}, "ask": {"status": "waiting_input"}},
        waiting={"ask": {"message": "which one?"}},
    )
    failed = run("failed", {"search": {"status": "succeeded"}, "book": {"status": "failed"}})
    assert step_progress(waiting) == StepProgress(done=1, total=2, current="ask")
    assert step_progress(failed) == StepProgress(done=1, total=2, current="book")


def test_a_finished_run_counts_skipped_steps_and_names_the_last_step_that_ended() -> None:
    nodes = {
        "check": {"status": "succeeded", "ended_at": "2026-01-01T00:00:01"},
        "reserve": {"status": "succeeded", "ended_at": "2026-01-01T00:00:02"},
        "waitlist": {"status": "skipped"},
    }
    progress = step_progress(run("succeeded", nodes))
    assert progress == StepProgress(done=3, total=3, current="reserve")
    assert step_progress(run("pending", {})) == StepProgress(done=0, total=0, current=None)
