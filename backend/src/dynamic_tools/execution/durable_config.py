"""Configuration of durable runs on DBOS: versions, names, the journal's database, WAL.

The rules these settings keep are listed in ``docs/durability.md`` (rule numbers in
``durable_launcher.py``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbos import (
    DBOSConfig,
    DBOSPortableJSONSerializer,
)
from sqlalchemy import make_url

from dynamic_tools.engine.journal import from_json
from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.errors import ConfigurationError
from dynamic_tools.execution.reconcile import FINISHED as JOURNAL_FINISHED

APP_VERSION = "dynamic-tools-interpreter-3"
"""The DBOS application version of every run (rule 2).

DBOS recovers only the runs of the version it runs, so this is a constant, not the package
version. Bump it ONLY when the order in which operations are issued changes (the interpreter,
``engine/tool_calls.py`` or ``durable_steps.py``): runs paused under the old version are then
stranded until a process of the old version finishes them.
"""

RUN_QUEUE = "dynamic-tools-runs"
"""The shared queue of new runs on PostgreSQL (any replica with room executes them)."""

LEAVE_QUEUE_SQL = (
    "UPDATE {tables}workflow_status SET queue_name = NULL "
    "WHERE workflow_uuid = :id AND queue_name = :q AND status = 'PENDING'"
)
LOCK_HELD_SQL = (  # is a session advisory lock on hashtextextended(:name, 0) held? (takes nothing)
    "WITH k AS (SELECT hashtextextended(:name, 0) AS key) "
    "SELECT EXISTS (SELECT 1 FROM pg_locks, k WHERE locktype = 'advisory' AND granted "
    "AND objsubid = 1 AND classid::text::bigint = ((k.key >> 32) & 4294967295) "
    "AND objid::text::bigint = (k.key & 4294967295))"
)
PENDING_OWNERS_SQL = (
    "SELECT DISTINCT executor_id FROM {tables}workflow_status "
    "WHERE status = 'PENDING' AND executor_id IS NOT NULL AND executor_id <> :me"
)

FLAGGED_SQL = (  # the unfinished workflows whose attributes may carry a cancel request
    "SELECT workflow_uuid, attributes FROM {tables}workflow_status "
    "WHERE status = 'PENDING' AND CAST(attributes AS TEXT) LIKE :flag"
)

NOTIFY_COALESCE_S = 1.0
"""PostgreSQL: how often DBOS's notifier thread flushes the NOTIFYs of workflow events and
streams (DBOS: every 10 ms, 100 wake-ups a second, about half a percent of a core on the 2-core
machine ``make bench`` reports from, with nothing to flush). The product uses neither events
nor streams; a ``send`` (the answer to a yield) is announced by its own trigger, not by this
thread, so a yield answered by another replica is not delayed."""

RUN_WORKFLOW = "dynamic_tools.run"
CHILD_WORKFLOW = "dynamic_tools.run_child"
FINISHED = tuple(sorted(JOURNAL_FINISHED))
WAIT_POLL_S = 0.2


@dataclass(frozen=True)
class DurableConfig:
    """Where runs are stored and who runs them.

    Attributes:
        database_url: The DBOS system database: ``sqlite:///path/runs.sqlite`` (one process)
            or ``postgresql://user@host:5432/db`` (any number of replicas).
        executor_id: This replica's id: unique among replicas and stable across its restarts
            (a replica recovers the runs of its own id).
        app_name: The DBOS application name (lowercase letters, digits, ``-``, ``_``).
        schema: The PostgreSQL schema of DBOS's tables (ignored for SQLite).
        cancel_poll_s: How often this process looks for cancel requests made by another
            process for the runs it executes. Requests made here take effect at once.
        notification_poll_s: SQLite: the longest time between two polls for messages, one
            query for all waiting yields (PostgreSQL is told by LISTEN/NOTIFY). An answer given
            in the process where the yield waits wakes it at once (``execution/local_wake.py``);
            one committed by another process (``DurableRunClient``, another replica) within
            about 40 ms, the listener watching the journal's ``data_version``
            (``execution/sqlite_listener.py``); this interval is its safety net (5 s: a poll
            for 1,000 paused runs costs a few ms of CPU), and the only delivery when the
            journal cannot be watched.
        log_level: DBOS's own log level.
        run_concurrency: PostgreSQL: how many runs of the shared queue one replica executes at
            once (a run waiting for input gives its slot back).
        queue_poll_s: PostgreSQL: how often a replica looks for queued runs.
        failover_check_s: PostgreSQL: how often a replica looks for dead replicas whose runs
            it should take over (0: never; ``POST /runs/recover`` still works).
        serving: What this process serves (its URL), named by the journal lock's message.
        pool_size: PostgreSQL: the most connections DBOS keeps to the journal (None: its
            default, 20).
    """

    database_url: str
    executor_id: str
    app_name: str = "dynamic-tools"
    schema: str = "dbos"
    cancel_poll_s: float = 1.0
    notification_poll_s: float = 5.0
    log_level: str = "WARNING"
    run_concurrency: int = 10
    queue_poll_s: float = 0.2
    failover_check_s: float = 5.0
    serving: str = ""
    pool_size: int | None = None

    def __post_init__(self) -> None:
        if not self.executor_id.strip():
            raise ConfigurationError("durable runs need an executor id (one per replica)")
        if self.cancel_poll_s <= 0 or self.notification_poll_s <= 0 or self.queue_poll_s <= 0:
            raise ConfigurationError("poll intervals must be positive")
        if self.run_concurrency < 1 or self.failover_check_s < 0:
            raise ConfigurationError("run_concurrency must be >= 1, failover_check_s >= 0")

    @property
    def journal_path(self) -> Path:
        """The SQLite journal file (only for a SQLite system database)."""
        path = make_url(self.database_url).database
        if not self.is_sqlite or not path or path == ":memory:":
            raise ConfigurationError(f"durable runs need a SQLite file, not '{self.database_url}'")
        return Path(path)

    @property
    def is_sqlite(self) -> bool:
        """Whether the system database is a SQLite file."""
        return self.database_url.startswith("sqlite")


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The database URL of a SQLite file."""
    return f"sqlite:///{os.fspath(path)}"


def enable_wal(database_url: str) -> None:
    """Put a SQLite database in WAL mode (persistent; 3-4x faster steps, rule 7)."""
    path = make_url(database_url).database
    if not path or path == ":memory:":
        raise ConfigurationError(f"durable runs need a SQLite file, not '{database_url}'")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as connection:
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise ConfigurationError(f"could not put '{path}' in WAL mode (got {mode})")


def dbos_config(config: DurableConfig) -> DBOSConfig:
    """The DBOS configuration for ``config``."""
    dbos: DBOSConfig = {
        "name": config.app_name,
        "system_database_url": config.database_url,
        "application_version": APP_VERSION,
        "executor_id": config.executor_id,
        "serializer": DBOSPortableJSONSerializer(),
        "log_level": config.log_level,
        "notification_listener_polling_interval_sec": config.notification_poll_s,
    }
    if not config.is_sqlite:
        dbos["dbos_system_schema"] = config.schema
        dbos["notification_coalesce_sec"] = NOTIFY_COALESCE_S
        if config.pool_size is not None:
            dbos["sys_db_pool_size"] = config.pool_size
    return dbos


def epoch_ms(value: Any) -> str | None:
    """A DBOS timestamp (epoch milliseconds) as ISO 8601 UTC text; None when unreadable."""
    if value is None:
        return None
    try:
        moment = datetime.fromtimestamp(int(value) / 1000, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return moment.isoformat().replace("+00:00", "Z")


def quoted(identifier: str) -> str:
    """``identifier`` quoted for SQL (a schema name)."""
    return '"' + identifier.replace('"', '""') + '"'


def outcome_from_dict(data: dict[str, Any]) -> RunOutcome:
    """A durable run's result (see :func:`~dynamic_tools.engine.journal.from_json`)."""
    return from_json(RunOutcome, data)
