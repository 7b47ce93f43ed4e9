"""The run store and the journal never disagree silently.

The run store (rows the UI, REST and MCP read) is a view; the journal (DBOS) is what executes.
They can drift when a process dies at the wrong moment: the journal finished a run but the
view missed its last event, or a run row was written and the process died before the journal
had it. :class:`RunReconciler` compares every run the view calls active with the journal:

- the journal says the run ended → the view gets that end (succeeded with its result, failed
  or cancelled), marked ``by: reconcile``;
- the journal has no entry for a run older than a grace period → the run never started: it is
  failed with a message that says so (``reason: never_started``);
- the journal says the run is unfinished → someone is (or will be) working on it: its executor
  is shown by ``GET /runs/{id}`` (``executor``), and a dead replica's runs are taken over by
  the launcher's failover (PostgreSQL) or at start (SQLite).

It runs once when the server starts (after the launcher has resumed what it owns) and, with
replicas, on every failover check.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from loguru import logger

from dynamic_tools.engine.journal import from_json
from dynamic_tools.engine.state import RunOutcome
from dynamic_tools.persistence.run_store import RunStore

NEVER_STARTED = (
    "the run was recorded but never started: the server stopped before handing it to the "
    "journal. Start it again."
)
JOURNAL_FAILED = "the run's execution failed in the journal: {error}"


FINISHED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})
"""The journal's (DBOS's) statuses of a workflow that has ended."""


@dataclass(frozen=True)
class JournalEntry:
    """What the journal says of a run: its workflow status and who holds it."""

    status: str
    executor_id: str | None
    updated_at: str | None
    output: dict[str, Any] | None
    error: str | None

    @property
    def finished(self) -> bool:
        """Whether the run's workflow has ended in the journal."""
        return self.status in FINISHED


class Journal(Protocol):
    """What the reconciler asks of the durable launcher."""

    async def journal_entries(self, run_ids: list[str]) -> dict[str, JournalEntry]:
        """The journal's entries of these runs (absent ids have none)."""
        ...


@dataclass
class Reconciled:
    """What one pass changed (run ids by what was done)."""

    settled: list[str] = field(default_factory=list)
    never_started: list[str] = field(default_factory=list)
    unfinished: int = 0

    @property
    def changed(self) -> int:
        """How many run rows were changed."""
        return len(self.settled) + len(self.never_started)


class RunReconciler:
    """Brings the run store in line with the journal (see the module docstring)."""

    def __init__(
        self, store: RunStore, journal: Journal, *, grace_s: float = 60.0, batch: int = 200
    ) -> None:
        self.store = store
        self.journal = journal
        self.grace = timedelta(seconds=grace_s)
        self.batch = batch

    async def once(self) -> Reconciled:
        """One pass over every active run."""
        done = Reconciled()
        active = await self.store.active_runs()
        now = datetime.now(UTC)
        for start in range(0, len(active), self.batch):
            chunk = active[start : start + self.batch]
            entries = await self.journal.journal_entries([run_id for run_id, _ in chunk])
            for run_id, created_at in chunk:
                entry = entries.get(run_id)
                if entry is None:
                    if now - _aware(created_at) >= self.grace and await self.store.finish(
                        run_id, "failed", {"message": NEVER_STARTED, "reason": "never_started"}
                    ):
                        done.never_started.append(run_id)
                elif entry.finished:
                    if await self._settle(run_id, entry):
                        done.settled.append(run_id)
                else:
                    done.unfinished += 1
        if done.changed:
            logger.warning(
                "reconciled {} runs with the journal ({} ended there, {} never started)",
                done.changed,
                len(done.settled),
                len(done.never_started),
            )
        return done

    async def _settle(self, run_id: str, entry: JournalEntry) -> bool:
        if entry.status == "SUCCESS" and entry.output is not None:
            outcome = from_json(RunOutcome, entry.output)
            changed = await self.store.settle(
                run_id, outcome.status, result=outcome.result, error=outcome.error, by="reconcile"
            )
            if changed:
                await self.store.record_outcome(run_id, outcome)
            return changed
        if entry.status == "CANCELLED":
            error = {"message": "the run was cancelled", "reason": "cancelled_in_journal"}
            return await self.store.settle(run_id, "cancelled", error=error, by="reconcile")
        message = JOURNAL_FAILED.format(error=entry.error or entry.status)
        error = {"message": message, "reason": "journal_" + entry.status.lower()}
        return await self.store.settle(run_id, "failed", error=error, by="reconcile")

    async def run_every(self, interval_s: float) -> None:
        """Reconcile every ``interval_s`` until cancelled (replicas: runs end anywhere)."""
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.once()
            except Exception as exc:  # the database may be briefly unreachable
                logger.warning("reconciling runs with the journal failed: {}", exc)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


__all__ = ["FINISHED", "NEVER_STARTED", "Journal", "JournalEntry", "Reconciled", "RunReconciler"]
