"""One query per poll for every ``recv`` waiting on a SQLite journal, not one per waiter.

On SQLite, DBOS learns that a message arrived only by polling: every ``notification_poll_s``
its listener thread runs one query *per waiting* ``recv``. A server with 1,000 runs paused at
a yield therefore ran 1,000 queries a second while idle (about 12 % of a core on the 2-core
machine ``make bench`` reports from). :func:`install_batched_listener` replaces that listener,
in this process, with one that asks once per poll which of the waiting workflows have an
unconsumed message (500 ids a query) and signals those waiters, exactly as DBOS's own listener
does when it finds one. It also notices shutdown within a fraction of a second instead of
sleeping out its interval.

Workflow events and streams (which this product does not wait on) are still checked entry by
entry, as DBOS does. PostgreSQL is not concerned: DBOS uses LISTEN/NOTIFY there.

This reaches into DBOS's SQLite system database (its waiter maps and tables), through
:mod:`dynamic_tools.adapters.dbos_internals`. When a DBOS
version no longer has what it needs, :func:`install_batched_listener` leaves DBOS's own
listener in place and says so in the log; ``test_sqlite_listener.py`` fails if that happens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from loguru import logger

from dynamic_tools.adapters import dbos_internals

__all__ = ["STOP_CHECK_S", "install_batched_listener", "poll_once"]

STOP_CHECK_S = 0.2
"""How often the listener looks whether DBOS is shutting down (between its polls)."""
_CHUNK = 500

_installed = False


def install_batched_listener() -> bool:
    """Make every SQLite system database of this process poll once for all its waiters.

    Call before ``DBOS.launch()``; idempotent. Returns whether the batched listener is in
    place.
    """
    global _installed
    if _installed:
        return True
    try:
        dbos_internals.check_sqlite_listener()
    except Exception as exc:  # another DBOS: keep its own listener
        logger.warning("keeping DBOS's own SQLite notification listener ({})", exc)
        return False
    dbos_internals.replace_sqlite_listener(_listen)
    _installed = True
    return True


def _listen(system_db: Any) -> None:
    """The listener thread's loop: one batched poll every interval until shutdown."""
    interval = dbos_internals.polling_interval_s(system_db)
    next_poll = time.monotonic() + interval
    while dbos_internals.background_running(system_db):
        time.sleep(max(0.0, min(STOP_CHECK_S, next_poll - time.monotonic())))
        if time.monotonic() < next_poll:
            continue
        next_poll = time.monotonic() + interval
        try:
            poll_once(system_db)
        except Exception as exc:  # the database is busy or gone: try again next time
            if dbos_internals.background_running(system_db):
                logger.warning("notification poll failed: {}", exc)


def poll_once(system_db: Any) -> int:
    """Signal the waiters that have something to read; the number of queries it took."""
    queries = _signal_messages(system_db)
    queries += _signal_each(system_db, system_db.workflow_events_map, _event_exists)
    queries += _signal_each(system_db, system_db.streams_map, _stream_exists)
    return queries


def _signal_messages(system_db: Any) -> int:
    """Every ``recv`` whose workflow has an unconsumed message on its topic: signalled."""
    waiting: dict[str, list[tuple[Any, Any]]] = {}
    for _payload, (workflow_id, topic, _key), signal in system_db.notifications_map.snapshot():
        waiting.setdefault(workflow_id, []).append((topic, signal))
    if not waiting:
        return 0
    table = system_db.tables.notifications
    ids = sorted(waiting)
    queries = 0
    with system_db.engine.connect() as conn:
        for start in range(0, len(ids), _CHUNK):
            query = (
                sa.select(table.c.destination_uuid, table.c.topic)
                .where(
                    table.c.destination_uuid.in_(ids[start : start + _CHUNK]),
                    table.c.consumed == sa.false(),
                )
                .distinct()
            )
            queries += 1
            for workflow_id, topic in conn.execute(query):
                for wanted, signal in waiting.get(workflow_id, ()):
                    if wanted == topic:
                        signal.set()
    return queries


Exists = Callable[[Any, Any, Any, Any], bool]


def _signal_each(system_db: Any, waiters: Any, exists: Exists) -> int:
    """DBOS's own check, entry by entry (for waits this product does not use)."""
    queries = 0
    for _payload, (workflow_id, key, _shard), signal in waiters.snapshot():
        with system_db.engine.connect() as conn:
            queries += 1
            if exists(system_db, conn, workflow_id, key):
                signal.set()
    return queries


def _event_exists(system_db: Any, conn: Any, workflow_id: Any, key: Any) -> bool:
    return _row_exists(system_db.tables.workflow_events, conn, workflow_id, key)


def _stream_exists(system_db: Any, conn: Any, workflow_id: Any, key: Any) -> bool:
    return _row_exists(system_db.tables.streams, conn, workflow_id, key)


def _row_exists(table: Any, conn: Any, workflow_id: Any, key: Any) -> bool:
    """Whether ``table`` has a row of ``workflow_id`` under ``key``."""
    query = sa.select(sa.literal(1)).where(table.c.workflow_uuid == workflow_id, table.c.key == key)
    return conn.execute(query.limit(1)).first() is not None
