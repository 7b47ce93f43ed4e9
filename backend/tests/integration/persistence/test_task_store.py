"""TaskStore on SQLite and PostgreSQL: owners' pages, a task's end is final, and the purge
removes expired tasks that ended (themselves or by their run) and never touches runs."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine

from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.persistence.task_store import TaskStore


async def test_owners_pages_ends_and_the_purge(engine: Engine) -> None:
    runs = RunStore(engine, poll_interval_s=0.05)
    tasks = TaskStore(engine)
    ended_run = await runs.create_run(workflow_id="w", params={})
    await runs.finish(ended_run.run_id, "cancelled", {"message": "stop"})
    active_run = await runs.create_run(workflow_id="w", params={})
    common = {"tool": "w_x", "executor": "e1"}
    await tasks.create(
        task_id=ended_run.run_id, run_id=ended_run.run_id, owner="a", ttl_ms=0, **common
    )
    await tasks.create(
        task_id=active_run.run_id, run_id=active_run.run_id, owner="a", ttl_ms=0, **common
    )
    await tasks.create(task_id="job-failed", owner="a", ttl_ms=0, **common)
    await tasks.create(task_id="job-open", owner="a", ttl_ms=0, **common)
    await tasks.create(task_id="run-purged", run_id="no-such-run", owner="a", ttl_ms=0, **common)
    await tasks.create(task_id="other", owner="b", ttl_ms=10**9, **common)
    assert await tasks.end("job-failed", "failed", failure={"isError": True}) is True
    assert await tasks.end("job-failed", "cancelled") is False, "an end is final"
    await tasks.update("job-failed", status="working")
    assert (await tasks.get("job-failed")).status == "failed"  # type: ignore[union-attr]

    page, total = await tasks.page("a", offset=0, limit=2)
    rest, _ = await tasks.page("a", offset=2, limit=10)
    assert total == 5 and len(page) == 2 and len(rest) == 3
    assert page[0].task_id == "run-purged", "newest first"

    removed = await tasks.purge_expired(utc_now() + timedelta(seconds=1))
    left = {r.task_id for r in (await tasks.page("a", offset=0, limit=10))[0]}
    assert removed == 3
    assert left == {active_run.run_id, "job-open"}, "open tasks stay past their ttl"
    assert await tasks.get("other") is not None
    assert (await runs.get_run(ended_run.run_id)).status == "cancelled", "runs are kept"
    await runs.aclose()


async def test_a_job_that_started_its_run_is_not_ended_as_interrupted(engine: Engine) -> None:
    """The orphan check reads a row, then ends it: a job that started its run in between
    keeps its task (``unless_started``)."""
    runs = RunStore(engine, poll_interval_s=0.05)
    tasks = TaskStore(engine)
    run = await runs.create_run(workflow_id="w", params={})
    await tasks.create(task_id="job", owner="a", ttl_ms=10**6, tool="w_x", executor="e1")
    await tasks.create(task_id="idle-job", owner="a", ttl_ms=10**6, tool="w_x", executor="e1")
    await tasks.update("job", run_id=run.run_id)

    assert await tasks.end("job", "failed", unless_started=True) is False
    assert (await tasks.get("job")).status != "failed"  # type: ignore[union-attr]
    assert await tasks.end("idle-job", "failed", unless_started=True) is True
    await runs.aclose()
