"""Worker processes that parse and check untrusted documents, each task with a time budget.

Workflow documents, OpenAPI descriptions and drafts arrive from callers. Parsing and checking
them is pure CPU (PyYAML, libyaml, pydantic, the OpenAPI converter): a 590 KB YAML takes
seconds. Run on the event loop, that stalls every other request (``/healthz`` included); run
in a thread, it still holds the GIL — libyaml's and pydantic's compiled code do not release it
— and nothing can stop it. So the work runs in separate processes:

- the event loop only sends the text and awaits the answer, whatever the document costs;
- a task that runs longer than ``timeout_s`` is stopped by killing its process (the only way
  to bound the CPU time of pure-Python parsing), and answers :class:`ProcessingLimitError`
  naming the ``DOCUMENT_TIMEOUT_S`` setting; a new worker replaces it;
- each worker's address space is capped at ``memory_mb`` (``RLIMIT_AS``), so a document that
  defeats the other limits fails with ``MemoryError`` in the worker, never the server
  (``DOCUMENT_WORKER_MEMORY_MB``); a worker that dies for any reason answers the same error.

Workers are forked from a ``forkserver`` that has imported the parsers once (fast to start,
and safe: the server's threads are not forked), started on first use, stopped by
:meth:`DocumentWorkers.close`. ``workers=0`` runs tasks in a thread instead (no time or
memory budget; for the command line, which reads the operator's own files).

Task functions must be module-level (they are pickled by reference) and return or raise
picklable values; project errors keep their fields across the process boundary. A task that
returns a large answer (a converted document's tools) runs with :meth:`DocumentWorkers.run_large`:
the worker pickles the answer into one bytes object and this process unpickles it, both with
the garbage collector paused (a collection during either walks every object built so far).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
import resource
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, TypeVar

from dynamic_tools.errors import ProcessingLimitError
from dynamic_tools.safe_parsing import gc_paused

if TYPE_CHECKING:
    from pebble import ProcessPool

T = TypeVar("T")
PRELOAD = ["dynamic_tools.tools.catalogs", "dynamic_tools.definitions.repository"]


def _limit_memory(max_bytes: int) -> None:
    """Worker initializer: cap the address space (a runaway document fails, not the host)."""
    if max_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


def pack(fn: Callable[..., Any], *args: Any) -> bytes:
    """``fn(*args)`` pickled (a worker's side of :meth:`DocumentWorkers.run_large`)."""
    with gc_paused():
        return pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> Any:
    """What :func:`pack` pickled; ``blob`` comes from this server's own worker."""
    with gc_paused():
        return pickle.loads(blob)  # our own worker's answer, never a caller's bytes


class DocumentWorkers:
    """A small pool of worker processes for parsing and checking documents.

    Typical use: ``violations = await workers.run(check_workflow, text, "yaml", tools, ids,
    field="content")``.
    """

    def __init__(self, *, workers: int = 2, timeout_s: float = 30.0, memory_mb: int = 1024):
        self.workers = workers
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()

    def _started(self) -> ProcessPool:
        from pebble import ProcessPool  # loaded with the first worker

        with self._lock:
            if self._pool is None or not self._pool.active:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(PRELOAD)
                self._pool = ProcessPool(
                    max_workers=self.workers,
                    initializer=_limit_memory,
                    initargs=(self.memory_mb * 1024 * 1024,),
                    context=context,
                )
            return self._pool

    async def run(self, fn: Callable[..., T], *args: Any, field: str = "content") -> T:
        """``fn(*args)`` in a worker; its result, or its exception raised here.

        Raises :class:`ProcessingLimitError` (violation path ``field``) when the task runs
        past ``timeout_s``, runs out of memory, or its worker dies.
        """
        if self.workers <= 0:
            return await asyncio.to_thread(fn, *args)
        from pebble import ProcessExpired

        pool = await asyncio.to_thread(self._started)  # the first start forks the server
        future = pool.schedule(fn, args=args, timeout=self.timeout_s)
        try:
            return await asyncio.wrap_future(future)
        except FutureTimeout:
            raise ProcessingLimitError(
                f"processing the {field} took longer than {self.timeout_s:g} s "
                "(setting DOCUMENT_TIMEOUT_S); it was stopped",
                field=field,
                rule="max_seconds",
                limit=self.timeout_s,
                setting="DOCUMENT_TIMEOUT_S",
            ) from None
        except (MemoryError, ProcessExpired):
            raise ProcessingLimitError(
                f"processing the {field} needed more than {self.memory_mb} MiB "
                "(setting DOCUMENT_WORKER_MEMORY_MB); it was stopped",
                field=field,
                rule="max_memory",
                limit=self.memory_mb,
                setting="DOCUMENT_WORKER_MEMORY_MB",
            ) from None
        except asyncio.CancelledError:
            future.cancel()  # type: ignore[no-untyped-call]  # pebble stops the task's worker
            raise

    async def run_large(self, fn: Callable[..., T], *args: Any, field: str = "content") -> T:
        """:meth:`run` for a task whose answer is large: handed back as one pickled blob.

        The same limits and errors as :meth:`run`; in a thread (``workers=0``) the answer is
        not pickled at all.
        """
        if self.workers <= 0:
            return await self.run(fn, *args, field=field)
        blob = await self.run(pack, fn, *args, field=field)
        answer: T = await asyncio.to_thread(unpack, blob)
        return answer

    def close(self) -> None:
        """Stop the workers (running tasks are abandoned)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()  # type: ignore[no-untyped-call]
            pool.join(timeout=5)
