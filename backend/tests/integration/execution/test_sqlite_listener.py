"""The batched SQLite listener: one query per poll for all paused runs, answers still arrive.

A server with many runs paused at a yield must cost next to nothing while idle; DBOS's own
SQLite listener queried once per waiting run every poll. These tests run real DBOS on a
SQLite journal: the listener in place is ours, a poll over several waiting runs is one query,
answers sent from another process (a ``DBOSClient``, as the CLI sends them) reach every
waiting run, and they do so long before the poll interval: the listener polls when another
connection commits to the journal.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dbos._dbos import _get_dbos_instance
from dbos._sys_db_sqlite import SQLiteSystemDatabase

from dynamic_tools.engine.local import EventList, MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.execution import sqlite_listener
from dynamic_tools.execution.durable_client import DurableRunClient
from dynamic_tools.execution.durable_config import DurableConfig, sqlite_url
from dynamic_tools.execution.durable_launcher import DurableLauncher
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
    tmp_path: Path, launch: Launch, monkeypatch: pytest.MonkeyPatch
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
    with monkeypatch.context() as patch:  # a SQLite without JSON functions: chunks of ids
        patch.setattr(sqlite_listener, "_json_each", False)
        assert await asyncio.to_thread(poll_once, system_db) == 1
    # the listener's poll covers every waiter: each waits an hour before checking by itself
    assert system_db._notification_fallback_polling_interval == sqlite_listener.WAITER_RECHECK_S

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


RESUME = """
import asyncio, json, sys
from dynamic_tools.execution.durable_client import DurableRunClient
from dynamic_tools.execution.durable_config import DurableConfig

async def main():
    client = DurableRunClient(DurableConfig(**json.loads(sys.argv[1])))
    try:
        await client.resume(sys.argv[2], "ask", {"ok": True})
    finally:
        client.close()

asyncio.run(main())
"""


async def paused(launcher: DurableLauncher, events: EventList, run_id: str, runs: int) -> None:
    """Start ``run_id`` and return once its yield's ``recv`` waits (``runs`` waiting in all)."""
    await launcher.start(run_id=run_id, **prepared(PAUSE, "pause", {}))
    await waiting_count(events, runs)
    system_db = _get_dbos_instance()._sys_db

    def waits() -> bool:
        return any(
            ids[0] == run_id for _key, ids, _signal in system_db.notifications_map.snapshot()
        )

    await until(waits, f"the waiter of {run_id}")


async def test_an_answer_sent_through_the_database_moves_the_run_on_before_the_poll(
    tmp_path: Path, launch: Launch
) -> None:
    # The poll interval is 30 s; the answers come from a DurableRunClient of its own and from
    # another process, through the database (no in-process wake-up): the listener sees the
    # journal's data_version move and polls at once. Each run must end within 10 s.
    config = DurableConfig(
        database_url=sqlite_url(tmp_path / "runs.sqlite"),
        executor_id="listener",
        notification_poll_s=30,
    )
    events = EventList()
    launcher = await launch(config, MockTools({"step": {"ok": True}}), events)

    await paused(launcher, events, "by-client", 1)
    client = DurableRunClient(config)
    try:
        await client.resume("by-client", "ask", {"ok": True})
    finally:
        client.close()
    outcome = await asyncio.wait_for(launcher.wait("by-client"), 10)  # far below the poll
    assert outcome.status == "succeeded", outcome.error

    await paused(launcher, events, "by-process", 2)
    fields = {"database_url": config.database_url, "executor_id": "cli"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", RESUME, json.dumps(fields), "by-process"],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    outcome = await asyncio.wait_for(launcher.wait("by-process"), 10)
    assert outcome.status == "succeeded", outcome.error
