"""The SQLite notification listener: one query a poll, a poll as soon as another process writes.

On SQLite, DBOS learns that a message arrived only by polling: every ``notification_poll_s``
its listener thread runs one query *per waiting* ``recv``. A server with 1,000 runs paused at
a yield therefore ran 1,000 queries a second while idle (about 12 % of a core on the 2-core
machine ``make bench`` reports from), and an answer sent by another process (the CLI, another
replica, a restarted server) waited up to a poll interval (about 0.9 s at the default 1 s).
:func:`install_batched_listener` replaces that listener, in this process, with one that

- polls in a batch: one query asks which of the waiting workflows have an unconsumed message
  (their ids passed as one JSON array) and the listener signals those waiters, exactly as
  DBOS's own listener does when it finds one (:func:`poll_once`);
- polls when the database changed: every :data:`CHECK_S` it reads ``PRAGMA data_version`` on
  a connection of its own to the journal file, a number SQLite changes whenever *another*
  connection commits to the file (in WAL mode it reads the shared-memory index, no table and
  no page: three system calls). It polls when the number moved, at most once a check, and otherwise
  only when ``notification_poll_s`` has passed since the last poll (a safety net). Its own
  polls are reads and do not move it; this process's own writes do, so a busy process polls
  at most every :data:`CHECK_S` while it has waiters, and an idle one once a poll interval;
- lets each waiting ``recv`` check the database by itself only once an hour
  (:data:`WAITER_RECHECK_S`) instead of once a minute: that check is DBOS's safety net for a
  listener that missed a message, and this listener's interval poll already covers every
  waiter in one query (1,000 paused runs made about 17 queries a second of it);
- reads nothing while no ``recv`` of this process waits (a ``recv`` checks the database itself
  right after it registers), so a server with no paused run pays only the sleeps;
- notices shutdown within :data:`CHECK_S` instead of sleeping out its interval.

A message committed in the process where the yield waits is woken at once anyway
(``execution/local_wake.py``). When the journal cannot be opened as a file (in memory, a
``file:`` URI) the listener polls every ``notification_poll_s`` and says so once in the log.

Workflow events and streams (which this product does not wait on) are still checked entry by
entry, as DBOS does. PostgreSQL is not concerned: DBOS uses LISTEN/NOTIFY there.

This reaches into DBOS's SQLite system database (its waiter maps and tables, its file),
through :mod:`dynamic_tools.adapters.dbos_internals`. When a DBOS version no longer has what it
needs, :func:`install_batched_listener` leaves DBOS's own listener in place and says so in the
log; ``test_sqlite_listener.py`` fails if that happens.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from loguru import logger

from dynamic_tools.adapters import dbos_internals

__all__ = [
    "CHECK_S",
    "RETRY_S",
    "STOP_CHECK_S",
    "WAITER_RECHECK_S",
    "DataVersion",
    "Listener",
    "install_batched_listener",
    "poll_once",
]

CHECK_S = 0.04
"""How often the listener reads the journal's ``data_version``.

A read takes about 4 µs on a warm CPU, but 70-90 µs after a sleep on the 2-core VM ``make
bench`` reports from (its three system calls are slow there): with the sleeps and a poll every
5 s, the listener's thread costs 0.3-0.4 % of a core with 1,000 paused runs, no more than the
poll every second used to, while an answer from another process is found within 40 ms (20 ms
on average).
"""
RETRY_S = 1.0
"""After a failed poll: how soon the next one is tried."""
STOP_CHECK_S = 0.2
"""Without a ``data_version`` to read: how often the listener looks whether DBOS is stopping."""
WAITER_RECHECK_S = 3600.0
"""How long a waiting ``recv`` waits for this listener before it queries by itself."""
_CHUNK = 500

_installed = False
_fallback_logged = False


def install_batched_listener() -> bool:
    """Make every SQLite system database of this process poll with :func:`_listen`.

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


class DataVersion:
    """Tells whether another connection committed to a SQLite file since it last looked.

    Holds one connection of its own to the file, in autocommit mode, that only ever reads
    ``PRAGMA data_version``: no transaction stays open, so checkpoints are not held back.
    Use it from one thread.
    """

    def __init__(self, path: str) -> None:
        # mode=rw: never create a file that is not there
        uri = Path(path).resolve().as_uri() + "?mode=rw"
        self._connection = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=1.0)
        try:
            self._last = self._read()
        except Exception:
            self._connection.close()
            raise

    def _read(self) -> int:
        rows = self._connection.execute("PRAGMA data_version").fetchall()
        return int(rows[0][0])

    def changed(self) -> bool:
        """Whether another connection committed since the previous call (or since opening)."""
        current = self._read()
        moved, self._last = current != self._last, current
        return moved

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()


class Listener:
    """When to poll: when the database changed (at most once a check) or the interval passed.

    ``poll`` runs one poll and returns the number of queries it took; ``version`` is None
    when there is no ``data_version`` to read (then only the interval counts).
    """

    def __init__(
        self,
        poll: Callable[[], int],
        version: DataVersion | None,
        interval_s: float,
        waiting: Callable[[], bool] = lambda: True,
    ) -> None:
        self._poll = poll
        self._waiting = waiting
        self._version = version
        self._interval_s = interval_s
        self._next_poll = time.monotonic() + interval_s
        self._unreadable = False

    @property
    def sleep_s(self) -> float:
        """How long to sleep before the next :meth:`check`."""
        if self._version is not None:
            return CHECK_S
        return max(0.0, min(STOP_CHECK_S, self._next_poll - time.monotonic()))

    def check(self) -> int:
        """Poll if due; the number of queries run (0 when no poll was due or nobody waits).

        While nothing waits, nothing is read: a ``recv`` looks in the database itself after
        it registers, so a message committed before that is not missed, and the first check
        after it registered sees ``data_version`` moved and polls once.
        """
        if not self._waiting():
            return 0
        changed = False
        if self._version is not None:
            try:
                changed = self._version.changed()
                self._unreadable = False
            except sqlite3.Error as exc:  # busy or gone: poll once to be safe, then the interval
                logger.debug("data_version unreadable: {}", exc)
                changed, self._unreadable = not self._unreadable, True
        now = time.monotonic()
        if not changed and now < self._next_poll:
            return 0
        self._next_poll = now + self._interval_s
        try:
            return self._poll()
        except Exception:  # the change is still unread: try again soon, not at the interval
            self._next_poll = now + min(self._interval_s, RETRY_S)
            raise


def _data_version(system_db: Any) -> DataVersion | None:
    """A :class:`DataVersion` of the journal file; None (logged once) when it cannot be had."""
    global _fallback_logged
    reason = "not a SQLite file"
    try:
        path = dbos_internals.system_database_file(system_db)
        if path is not None:
            return DataVersion(path)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
    if not _fallback_logged:
        _fallback_logged = True
        logger.warning(
            "SQLite journal: no data_version to watch ({}); answers sent by another process "
            "arrive at the next poll",
            reason,
        )
    return None


def _listen(system_db: Any) -> None:
    """The listener thread's loop: a batched poll whenever due, until shutdown."""
    dbos_internals.set_waiter_recheck_s(system_db, WAITER_RECHECK_S)
    version = _data_version(system_db)
    listener = Listener(
        lambda: poll_once(system_db),
        version,
        dbos_internals.polling_interval_s(system_db),
        lambda: dbos_internals.has_waiters(system_db),
    )
    try:
        while dbos_internals.background_running(system_db):
            time.sleep(listener.sleep_s)
            if not dbos_internals.background_running(system_db):
                break
            try:
                listener.check()
            except Exception as exc:  # the database is busy or gone: try again next time
                if dbos_internals.background_running(system_db):
                    logger.warning("notification poll failed: {}", exc)
    finally:
        if version is not None:
            version.close()


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
    rows: Any = None
    with system_db.engine.connect() as conn:
        if _json_each and system_db.engine.dialect.name == "sqlite":
            try:
                rows = conn.execute(_unconsumed(table), {"ids": json.dumps(list(waiting))})
                queries = 1
            except sa.exc.OperationalError as exc:
                if "json_each" not in str(exc):  # busy, gone: the listener tries again
                    raise
                _no_json_each()  # a SQLite without JSON functions
                conn.rollback()
        if rows is None:  # PostgreSQL (execution/pg_waiters.py), or no JSON functions
            rows, queries = _unconsumed_by_chunks(conn, table, sorted(waiting))
        for workflow_id, topic in rows:
            for wanted, signal in waiting.get(workflow_id, ()):
                if wanted == topic:
                    signal.set()
    return queries


_json_each = True


def _no_json_each() -> None:
    global _json_each
    _json_each = False
    logger.warning("SQLite without json_each: the notification poll asks by chunks of ids")


def _unconsumed(table: Any) -> Any:
    """The (workflow, topic) pairs with an unconsumed message, of the workflows ``ids`` lists.

    ``ids`` is one parameter, a JSON array: one statement whatever their number, compiled once
    (SQLAlchemy's cache) instead of rendering an ``IN`` of every id at every poll.
    """
    ids = sa.func.json_each(sa.bindparam("ids", type_=sa.String)).table_valued("value")
    return (
        sa.select(table.c.destination_uuid, table.c.topic)
        .where(
            table.c.destination_uuid.in_(sa.select(ids.c.value)),
            table.c.consumed == sa.false(),
        )
        .distinct()
    )


def _unconsumed_by_chunks(conn: Any, table: Any, ids: list[str]) -> tuple[list[Any], int]:
    """As :func:`_unconsumed`, ``_CHUNK`` ids an ``IN`` (a SQLite without JSON functions)."""
    rows: list[Any] = []
    queries = 0
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
        rows.extend(conn.execute(query))
    return rows, queries


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
