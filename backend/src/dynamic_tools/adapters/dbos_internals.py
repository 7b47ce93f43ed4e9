"""Every use of DBOS's internals, in one place.

What is used: the running instance's system database and its registry of active workflows, the
SQLite notification listener, the waiter map's keys, the file of a SQLite system database and
how long a waiter waits before it re-checks the database by itself.

The product uses them to wake a ``recv`` of this process at once (``execution/local_wake.py``),
to poll once for every waiter on SQLite (``execution/sqlite_listener.py``) and to give a run
waiting for input its queue slot back (``execution/queue_slots.py``). Each of those degrades
when a function here raises (the feature is off, DBOS's own behaviour stays). They are written
for :data:`DBOS_VERSION`; ``tests/unit/adapters/test_dbos_internals.py`` asserts that version
and the shape of every name used below, so it fails on the next DBOS release that changes one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = [
    "DBOS_VERSION",
    "active_buckets",
    "active_lock",
    "active_workflows",
    "background_running",
    "check_sqlite_listener",
    "polling_interval_s",
    "replace_sqlite_listener",
    "set_waiter_recheck_s",
    "system_database",
    "system_database_file",
    "waiter_key",
]

DBOS_VERSION = "3.4.0"
"""The DBOS release these internals were read from (``pyproject.toml`` pins it)."""


def _instance() -> Any:
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()


def system_database() -> Any:
    """The launched DBOS's system database (``SystemDatabase``); raises when none."""
    return _instance()._sys_db


def active_workflows() -> Any:
    """The launched DBOS's registry of the workflows executing in this process.

    An ``ActiveWorkflowById``: ``count_for_queue``, buckets by workflow id.
    """
    return _instance()._active_workflows_set


def active_buckets(active: Any) -> dict[str, list[Any]]:
    """The registry's executions: workflow id → a ``(queue, partition)`` bucket per execution.

    A bucket is None for an execution not dequeued from a queue. Read it under
    :func:`active_lock`.
    """
    buckets: dict[str, list[Any]] = active._m
    return buckets


def active_lock(active: Any) -> threading.Lock:
    """The lock that guards the registry's buckets."""
    lock: threading.Lock = active._lock
    return lock


def waiter_key(system_db: Any, workflow_id: str, topic: str) -> str:
    """The key of ``notifications_map`` a ``recv`` of ``workflow_id`` on ``topic`` waits under."""
    key, _components = system_db._waiter(workflow_id, topic)
    return str(key)


def check_sqlite_listener() -> None:
    """Raise unless :func:`replace_sqlite_listener` can replace the SQLite listener.

    The replacement reads the waiter maps with ``snapshot``.
    """
    from dbos._sys_db import SystemDatabase, ThreadSafeEventDict
    from dbos._sys_db_sqlite import SQLiteSystemDatabase

    if not all(
        hasattr(owner, name)
        for owner, name in (
            (ThreadSafeEventDict, "snapshot"),
            (SystemDatabase, "_notification_listener_polling"),
            (SystemDatabase, "_notification_fallback_polling_interval"),
        )
    ):
        raise AttributeError("DBOS's waiter maps changed")
    if not callable(getattr(SQLiteSystemDatabase, "_notification_listener", None)):
        raise AttributeError("DBOS's SQLite notification listener changed")


def replace_sqlite_listener(listen: Callable[[Any], None]) -> None:
    """Make ``listen(system_db)`` the listener thread's loop of every SQLite system database."""
    from dbos._sys_db_sqlite import SQLiteSystemDatabase

    SQLiteSystemDatabase._notification_listener = listen  # type: ignore[method-assign,assignment]


def polling_interval_s(system_db: Any) -> float:
    """How often DBOS polls for notifications on this system database (seconds)."""
    return float(system_db._notification_listener_polling_interval_sec)


def set_waiter_recheck_s(system_db: Any, seconds: float) -> None:
    """Make each ``recv`` (or ``get_event``) wait ``seconds`` before it queries by itself.

    DBOS's default, while a listener runs, is 60 s: a waiter re-checks the database that often
    in case the listener missed its message.
    """
    system_db._notification_fallback_polling_interval = float(seconds)


def has_waiters(system_db: Any) -> bool:
    """Whether some ``recv``, ``get_event`` or stream read of this process waits right now."""
    for waiters in (
        system_db.notifications_map,
        system_db.workflow_events_map,
        system_db.streams_map,
    ):
        entries = getattr(waiters, "_dict", None)
        if entries is None:  # another DBOS: the public snapshot
            if waiters.snapshot():
                return True
        elif entries:
            return True
    return False


def background_running(system_db: Any) -> bool:
    """Whether the system database's background threads should go on (False at shutdown)."""
    return bool(system_db._run_background_processes)


def system_database_file(system_db: Any) -> str | None:
    """The file of a SQLite system database, from its engine's URL.

    None when the system database is not a plain SQLite file (PostgreSQL, in memory, or a
    ``file:`` URI, which the caller cannot open as a path).
    """
    url = system_db.engine.url
    if url.get_backend_name() != "sqlite" or url.query.get("uri"):
        return None
    path = url.database
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return str(path)
