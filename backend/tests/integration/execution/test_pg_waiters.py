"""PostgreSQL: paused runs are checked for their message in one query, not one each a minute.

A message whose NOTIFY never comes (the trigger that sends it is disabled here, as a dropped
listening connection would lose it) still reaches its run: the waiter poll finds it
(execution/pg_waiters.py). Each waiting ``recv`` checks by itself only once an hour.
"""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from dbos._dbos import _get_dbos_instance

from dynamic_tools.engine.local import EventList, MockTools
from dynamic_tools.execution.durable_client import DurableRunClient
from dynamic_tools.execution.durable_config import DurableConfig
from dynamic_tools.execution.pg_waiters import poll_waiters
from dynamic_tools.execution.sqlite_listener import WAITER_RECHECK_S, poll_once
from tests.integration.execution.conftest import Launch, pg_engine
from tests.integration.execution.test_sqlite_listener import PAUSE, waiting_count
from tests.support.plans import prepared
from tests.support.waiting import until


async def test_a_message_whose_notify_was_lost_reaches_its_run_through_the_waiter_poll(
    pg_config: DurableConfig, launch: Launch
) -> None:
    events = EventList()
    launcher = await launch(pg_config, MockTools({"step": {"ok": True}}), events)
    system_db = _get_dbos_instance()._sys_db
    assert system_db._notification_fallback_polling_interval == WAITER_RECHECK_S
    assert "durable-waiters" in {task.get_name() for task in asyncio.all_tasks()}
    ids = [f"paused-{i}" for i in range(3)]
    for run_id in ids:
        await launcher.start(run_id=run_id, **prepared(PAUSE, "pause", {}))
    await waiting_count(events, len(ids))
    await until(lambda: len(system_db.notifications_map.snapshot()) >= 3, "three waiters")
    assert await asyncio.to_thread(poll_once, system_db) == 1  # three waiters, one query

    engine = pg_engine(pg_config.database_url)
    with engine.begin() as connection:  # no NOTIFY for the messages sent from now on
        connection.execute(
            sa.text(
                f'ALTER TABLE "{pg_config.schema}".notifications '
                "DISABLE TRIGGER dbos_notifications_trigger"
            )
        )
    engine.dispose()
    client = DurableRunClient(pg_config)
    try:
        for run_id in ids:
            await client.resume(run_id, "ask", {"ok": True})
    finally:
        client.close()

    poller = asyncio.create_task(poll_waiters(system_db, interval_s=0.05))
    try:
        outcomes = [await asyncio.wait_for(launcher.wait(run_id), 30) for run_id in ids]
    finally:
        poller.cancel()
    assert [o.status for o in outcomes] == ["succeeded"] * 3
