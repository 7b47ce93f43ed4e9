"""EventWriter: one thread that stores the run events queued by every run, in batches.

The engine's ``emit`` only queues (no thread hop, no transaction per event); the writer takes
everything queued so far (waiting a few milliseconds for more when events trickle in, unless
a reader is waiting) and stores it in one transaction. A reader that must see what was
emitted before it calls :meth:`EventWriter.flush` first (the run store's reads all do), which
waits only when something is still queued.

What a crash loses: events queued and not yet written. A durable run replays after a restart
and emits them again (events are idempotent in the store); a local run dies with its process
anyway and is marked interrupted. A batch that fails is written event by event, so one bad
event (a duplicate raced in by another replica, an unknown run) costs only itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from loguru import logger

from dynamic_tools.engine import events as ev

__all__ = ["EventWriter"]

_STOP = object()
RETRY_PAUSES_S = (0.05, 0.25, 1.0, 4.0)
"""Pauses between the tries of a batch the database refused (then it is dropped, logged)."""


class EventWriter:
    """Queues events and stores them from a thread of its own (see the module docstring)."""

    def __init__(
        self,
        write: Callable[[list[ev.Event]], None],
        *,
        max_batch: int = 512,
        linger_s: float = 0.005,
        name: str = "",
    ) -> None:
        self._write = write
        self._max_batch = max_batch
        self._linger_s = linger_s
        self._name = name or "run-events"
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pending = 0
        self._thread: threading.Thread | None = None

    def put(self, event: ev.Event) -> None:
        """Queue ``event`` (returns at once; thread-safe, from any event loop)."""
        with self._lock:
            self._pending += 1
            self._start()
        self._queue.put(event)

    async def flush(self) -> None:
        """Return once every event queued before this call has been stored (or dropped)."""
        with self._lock:
            if self._pending == 0:
                return
            self._start()
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._queue.put(done)
        await asyncio.wrap_future(done)

    def close(self, timeout_s: float = 30.0) -> None:
        """Store what is queued, then stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            thread.join(timeout_s)

    @property
    def pending(self) -> int:
        """Events queued and not yet stored."""
        with self._lock:
            return self._pending

    def _write_with_retries(self, events: list[ev.Event]) -> None:
        """Store a batch; a failing database gets a few tries, then the batch is dropped."""
        for attempt, pause in enumerate((*RETRY_PAUSES_S, None), start=1):
            try:
                self._write(events)
                return
            except Exception as exc:  # the database is down, full, locked too long...
                if pause is None:
                    logger.error(
                        "{} run event(s) not stored after {} tries ({}: {}); a durable run "
                        "replays them on restart, reconciliation settles its end",
                        len(events),
                        attempt,
                        type(exc).__name__,
                        exc,
                    )
                    return
                logger.warning("storing run events failed ({}); trying again", type(exc).__name__)
                time.sleep(pause)

    def _next_batch(self) -> list[Any]:
        """What is queued, waiting up to ``linger_s`` for more events to share a transaction.

        A flush or a stop ends the wait at once (a reader is waiting for it).
        """
        batch = [self._queue.get()]
        deadline = time.monotonic() + self._linger_s
        while len(batch) < self._max_batch and isinstance(batch[-1], ev.Event):
            remaining = deadline - time.monotonic()
            try:
                item = self._queue.get(timeout=remaining) if remaining > 0 else None
            except queue.Empty:
                item = None
            if item is None:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            batch.append(item)
        return batch

    # --- the thread ----------------------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is None:  # under self._lock
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            events = [item for item in batch if isinstance(item, ev.Event)]
            if events:
                self._write_with_retries(events)
                with self._lock:
                    self._pending -= len(events)
            for item in batch:
                if isinstance(item, concurrent.futures.Future) and not item.done():
                    item.set_result(None)
            if any(item is _STOP for item in batch):
                return
