"""ItemJournal: how each finished item of a durable fan-out in flight ended (``run_items``).

A durable ``foreach`` (or ``parallel``) whose items are each one repeatable step runs them
side by side inside its parent's workflow instead of a child workflow each. The fan-out's
outcome is journaled by DBOS as one step when it ends; until then each item's outcome is
written here, so a run recovered in the middle starts only the items not found here.

Writes are group commits: an item waits until its outcome is stored (its slot is freed only
then), and every outcome that arrives while a transaction is being written goes into the next
one. With fifty items at once, a thousand items cost a few dozen transactions, not a thousand.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from dynamic_tools.persistence.db import run_items, write_transaction

__all__ = ["ItemJournal"]

_Row = dict[str, Any]


class ItemJournal:
    """Reads and writes ``run_items`` (see the module docstring); thread- and loop-safe."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._queued: list[tuple[_Row, concurrent.futures.Future[None]]] = []
        self._writing = False
        self.transactions = 0
        """Transactions written so far (benchmarks and tests read it)."""

    async def finished(self, run_id: str, fan_out: str) -> dict[int, dict[str, Any]]:
        """The outcomes stored for the fan-out ``fan_out`` of ``run_id``, by item index."""

        def read() -> dict[int, dict[str, Any]]:
            query = select(run_items.c.item, run_items.c.outcome).where(
                run_items.c.run_id == run_id, run_items.c.fan_out == fan_out
            )
            with self.engine.connect() as conn:
                return {int(item): dict(outcome) for item, outcome in conn.execute(query)}

        return await asyncio.to_thread(read)

    async def record(self, run_id: str, fan_out: str, item: int, outcome: dict[str, Any]) -> None:
        """Store one item's outcome; returns once it is committed (raises if it cannot be)."""
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        row = {"run_id": run_id, "fan_out": fan_out, "item": item, "outcome": outcome}
        with self._lock:
            self._queued.append((row, done))
            start, self._writing = not self._writing, True
        if start:
            threading.Thread(target=self._drain, name="run-items", daemon=True).start()
        await asyncio.wrap_future(done)

    async def forget(self, run_id: str, fan_out: str) -> None:
        """Drop the fan-out's outcomes (its own outcome is journaled now)."""

        def work() -> None:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    delete(run_items).where(
                        run_items.c.run_id == run_id, run_items.c.fan_out == fan_out
                    )
                )

        await asyncio.to_thread(work)

    def _drain(self) -> None:
        """Write what is queued, one transaction per round, until nothing is left."""
        while True:
            with self._lock:
                batch, self._queued = self._queued, []
                if not batch:
                    self._writing = False
                    return
            try:
                with write_transaction(self.engine) as conn:
                    conn.execute(self._insert(conn.dialect.name), [row for row, _ in batch])
                self.transactions += 1
            except Exception as exc:  # the item is then not counted as finished
                for _, done in batch:
                    done.set_exception(exc)
                continue
            for _, done in batch:
                done.set_result(None)

    @staticmethod
    def _insert(dialect: str) -> Any:
        """An insert that keeps the row already there (a replica that raced this one)."""
        if dialect == "postgresql":
            from sqlalchemy.dialects import postgresql  # the dialect in use is loaded already

            return postgresql.insert(run_items).on_conflict_do_nothing()
        if dialect == "sqlite":
            from sqlalchemy.dialects import sqlite

            return sqlite.insert(run_items).on_conflict_do_nothing()
        return insert(run_items)
