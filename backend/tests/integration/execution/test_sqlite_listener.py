"""The batched SQLite listener: one query per poll for all paused runs, answers still arrive.

A server with many runs paused at a yield must cost next to nothing while idle; DBOS's own
SQLite listener queried once per waiting run every poll. These tests run real DBOS on a
SQLite journal: the listener in place is ours, a poll over several waiting runs is one query,
and answers sent from another process (a ``DBOSClient``, as the CLI sends them) reach every
waiting run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from dbos._dbos import _get_dbos_instance
from dbos._sys_db_sqlite import SQLiteSystemDatabase

from dynamic_tools.engine.local import EventList, MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.execution.durable_client import DurableRunClient
from dynamic_tools.execution.durable_config import DurableConfig, sqlite_url
from dynamic_tools.execution.sqlite_listener import _listen, poll_once
from tests.integration.execution.conftest import Launch
from tests.support.plans import prepared
from tests.support.waiting import until

PAUSE = WorkflowDocument.model_validate(
    {
        "workflows": {
            "pause": {
                "graph": {
                    "ask": {"type": "yield", "message": "go?", "expects": {"ok": "bool"}},
                    "after": {"call": "step", "depends_on": "ask"},
                }
            }
        }
    }
)


async def waiting_count(events: EventList, runs: int) -> None:
    async def wait() -> None:
        while len(events.of("waiting_input")) < runs:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), 30)


async def test_one_query_a_poll_finds_answers_sent_from_another_process(
    tmp_path: Path, launch: Launch
) -> None:
    config = DurableConfig(
        database_url=sqlite_url(tmp_path / "runs.sqlite"),
        executor_id="listener",
        notification_poll_s=0.1,
    )
    events = EventList()
    launcher = await launch(config, MockTools({"step": {"ok": True}}), events)
    assert SQLiteSystemDatabase._notification_listener is _listen
    ids = [f"paused-{i}" for i in range(3)]
    for run_id in ids:
        await launcher.start(run_id=run_id, **prepared(PAUSE, "pause", {}))
    await waiting_count(events, len(ids))
    system_db = _get_dbos_instance()._sys_db
    await until(  # each recv has registered its waiter
        lambda: len(system_db.notifications_map.snapshot()) >= 3, "three waiters"
    )
    assert len(system_db.notifications_map.snapshot()) == 3
    assert await asyncio.to_thread(poll_once, system_db) == 1  # three waiters, one query

    client = DurableRunClient(config)  # not this process's DBOS: no in-process wake-up
    try:
        for run_id in ids:
            await client.resume(run_id, "ask", {"ok": True})
    finally:
        client.close()
    outcomes = [await asyncio.wait_for(launcher.wait(run_id), 30) for run_id in ids]
    assert [o.status for o in outcomes] == ["succeeded"] * 3


async def test_a_poll_with_nobody_waiting_asks_nothing(tmp_path: Path, launch: Launch) -> None:
    config = DurableConfig(
        database_url=sqlite_url(tmp_path / "runs.sqlite"), executor_id="listener"
    )
    await launch(config, MockTools({}))
    assert await asyncio.to_thread(poll_once, _get_dbos_instance()._sys_db) == 0
