"""PostgreSQL: one query a minute for all paused runs, instead of one per paused run.

On PostgreSQL DBOS learns of a message by LISTEN/NOTIFY. A notification lost meanwhile (the
listening connection dropped and was opened again) is caught by each waiting ``recv`` itself:
every 60 s it queries the database for its own message. With 1,000 runs paused at a yield
that is about 17 queries a second, through DBOS's thread pool, about 2 % of a core on the
2-core machine ``make bench`` reports from, for nothing while no notification is lost.

:func:`install_waiter_poll` keeps the same guarantee for a fraction of it: each waiter checks by
itself only once an hour (:data:`~dynamic_tools.execution.sqlite_listener.WAITER_RECHECK_S`),
and :func:`poll_waiters` asks every :data:`WAITER_POLL_S` which of the waiting workflows have an
unconsumed message, in one query per 500 of them, and signals those
(:func:`~dynamic_tools.execution.sqlite_listener.poll_once`, the SQLite listener's poll). An
answer sent by another replica still arrives by LISTEN/NOTIFY at once.

This reaches into DBOS's system database through
:mod:`dynamic_tools.adapters.dbos_internals`; when that fails, DBOS's own per-waiter check stays
(logged once).
"""

from __future__ import annotations

import asyncio
from typing import Any

from loguru import logger

from dynamic_tools.adapters import dbos_internals
from dynamic_tools.execution.sqlite_listener import WAITER_RECHECK_S, poll_once

__all__ = ["WAITER_POLL_S", "install_waiter_poll", "poll_waiters"]

WAITER_POLL_S = 60.0
"""How often every waiting ``recv`` is checked at once (DBOS checks each every 60 s)."""


def install_waiter_poll() -> Any | None:
    """After ``DBOS.launch()``: the system database for :func:`poll_waiters`, or None.

    Its waiters now check by themselves once an hour. None (DBOS's own checks stay) when
    DBOS's internals are not what this expects.
    """
    try:
        system_db = dbos_internals.system_database()
        dbos_internals.set_waiter_recheck_s(system_db, WAITER_RECHECK_S)
    except Exception as exc:
        logger.warning("keeping DBOS's check of each waiting recv ({})", exc)
        return None
    return system_db


async def poll_waiters(system_db: Any, interval_s: float = WAITER_POLL_S) -> None:
    """Every ``interval_s``: signal the waiting ``recv`` whose message has arrived (forever)."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await asyncio.to_thread(poll_once, system_db)
        except Exception as exc:  # the database may be briefly unreachable
            logger.warning("could not check the waiting runs for messages: {}", exc)
