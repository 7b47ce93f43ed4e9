"""Liveness of replicas on PostgreSQL: a session advisory lock per executor id."""

from __future__ import annotations

import contextlib
import time

import sqlalchemy as sa
from sqlalchemy import make_url
from sqlalchemy.pool import NullPool

from dynamic_tools.errors import ConflictError
from dynamic_tools.execution.durable_config import DurableConfig

# --- liveness of replicas (PostgreSQL) ------------------------------------------------------
PRESENCE_WAIT_S = 15.0
"""How long a launching replica waits for its presence lock (a killed predecessor's session
ends as soon as PostgreSQL sees its connection close)."""


class ExecutorPresence:
    """Proof that a replica is alive: a PostgreSQL session advisory lock on its executor id.

    The replica takes the lock when it launches and holds it, on a connection of its own,
    until it shuts down; when its process dies (kill -9, a lost host) PostgreSQL ends the
    session and the lock is free. So "the lock can be taken" means "no process runs with that
    executor id", which :meth:`DurableLauncher.take_over` requires (docs/durability.md, rule
    4), and a second process started with a live replica's id refuses to launch (rule 3). The lock's
    name includes the application and the DBOS schema, so separate installations sharing one
    database do not see each other. SQLite needs none of this (one process per file).
    """

    def __init__(self, config: DurableConfig, executor_id: str | None = None) -> None:
        self.config = config
        self.executor_id = executor_id or config.executor_id
        self._engine: sa.Engine | None = None
        self._connection: sa.Connection | None = None
        self._held = False

    @property
    def name(self) -> str:
        """The lock's name (hashed to the 64-bit key PostgreSQL locks on)."""
        return f"dynamic-tools:{self.config.app_name}:{self.config.schema}:{self.executor_id}"

    def _connect(self) -> sa.Connection:
        url = make_url(self.config.database_url).set(drivername="postgresql+psycopg")
        self._engine = sa.create_engine(url, poolclass=NullPool)
        return self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def try_acquire(self) -> bool:
        """Take the lock if it is free (keeping the connection); False if someone holds it."""
        if self._connection is None:
            self._connection = self._connect()
        taken = self._connection.execute(
            sa.text("SELECT pg_try_advisory_lock(hashtextextended(:name, 0))"),
            {"name": self.name},
        ).scalar()
        self._held = self._held or bool(taken)
        return bool(taken)

    def acquire(self, wait_s: float = PRESENCE_WAIT_S, poll_s: float = 0.2) -> None:
        """Take the lock, waiting up to ``wait_s``; ConflictError if it stays taken."""
        deadline = time.monotonic() + wait_s
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                self.release()
                raise ConflictError(
                    f"another process is running with executor id '{self.executor_id}' on "
                    "this database; every replica needs its own id (EXECUTOR_ID)",
                    context={"executor_id": self.executor_id},
                )
            time.sleep(poll_s)

    def release(self) -> None:
        """Give the lock back (closing the session)."""
        connection, engine = self._connection, self._engine
        self._connection = self._engine = None
        if connection is not None:
            with contextlib.suppress(Exception):
                if self._held:  # at once: closing alone frees it only when the backend exits
                    connection.execute(
                        sa.text("SELECT pg_advisory_unlock(hashtextextended(:name, 0))"),
                        {"name": self.name},
                    )
            self._held = False
            with contextlib.suppress(Exception):
                connection.close()
        if engine is not None:
            engine.dispose()
