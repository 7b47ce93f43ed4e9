"""A run waiting for input gives its worker slot on the run queue back, in DBOS's count too.

On PostgreSQL new runs go through a shared queue, at most ``RUN_CONCURRENCY`` running in each
replica. A run that waits for a person may wait for days, so it leaves the queue: its row's
``queue_name`` is cleared (what the other replicas count). But DBOS counts this replica's
running workflows in memory, by the queue they were dequeued from, and that count never
learns that the run left. Without this module, ``RUN_CONCURRENCY`` runs waiting at a yield
would stop the replica from starting any other run.

:class:`QueueSlots` wraps that count (``count_for_queue`` of DBOS's registry of active
workflows, in this process only) so that the executions that left the queue and are still
active are not counted. An answered run goes on in the same execution, outside the limit;
once it ends it leaves DBOS's registry and this one forgets it.

This reaches into DBOS's internals (:mod:`dynamic_tools.adapters.dbos_internals`); when a
DBOS version no longer has them, :meth:`install` logs it and returns False (runs waiting for
input then keep their slot), and ``test_a_run_waiting_for_input_gives_its_slot_back`` fails.
"""

from __future__ import annotations

import threading
from typing import Any

from loguru import logger

from dynamic_tools.adapters import dbos_internals

__all__ = ["QueueSlots"]


class QueueSlots:
    """Runs of this process that left the run queue while they wait for input."""

    def __init__(self) -> None:
        self._left: set[str] = set()
        self._lock = threading.Lock()
        self._active: Any = None

    def install(self) -> bool:
        """Make DBOS's in-memory count of this process's queued work skip the runs that left.

        Call after ``DBOS.launch()``. Returns whether the count is wrapped.
        """
        try:
            active = dbos_internals.active_workflows()
            original = active.count_for_queue
            buckets = dbos_internals.active_buckets(active)
            if not isinstance(buckets, dict):
                raise TypeError("DBOS's registry of active workflows changed")
        except Exception as exc:  # another DBOS: waiting runs keep their slot
            logger.warning("waiting runs cannot give their queue slot back ({})", exc)
            return False

        def count_for_queue(queue_name: str) -> int:
            return max(0, int(original(queue_name)) - self._still_counted(active, queue_name))

        active.count_for_queue = count_for_queue
        self._active = active
        return True

    def left(self, run_id: str) -> None:
        """``run_id`` left the queue (its row's queue name is cleared)."""
        with self._lock:
            self._left.add(run_id)

    def _still_counted(self, active: Any, queue_name: str) -> int:
        """How many executions that left ``queue_name`` DBOS still counts against it."""
        buckets = dbos_internals.active_buckets(active)
        with self._lock, dbos_internals.active_lock(active):
            gone = {run_id for run_id in self._left if run_id not in buckets}
            self._left -= gone
            return sum(
                1
                for run_id in self._left
                for bucket in buckets.get(run_id, ())
                if bucket is not None and bucket[0] == queue_name
            )
