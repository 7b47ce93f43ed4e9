"""One process per SQLite journal: a file lock, and the journal's fixed executor identity.

A SQLite journal (DBOS's system database in a file) is executed by exactly one process. That
process holds an exclusive ``flock`` on ``<journal>.lock`` for as long as it runs, and writes
who it is into the file (pid, host, what it serves, since when). A second server started on the
same data refuses to start with a message that names the first one. The kernel releases the
lock when the holder dies, kill -9 included, so a restart never has to clean anything up.

Because only one process ever executes a journal, its executor identity does not need to name
a replica: it is generated once, stored in ``<journal>.executor`` beside the data, and reused by
every later process on that journal, whatever its port or host name. (A restart on another
port is the same executor and resumes its runs.)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

from dynamic_tools.errors import ConfigurationError

LEGACY_JOURNAL = "runs_dbos.sqlite"
"""Where earlier versions kept the journal (one per data directory, whatever DATABASE_URL)."""


def journal_identity(journal: Path) -> str:
    """The executor id of the process that runs ``journal``: made once, kept beside it."""
    path = journal.with_name(journal.name + ".executor")
    with contextlib.suppress(FileNotFoundError):
        stored = path.read_text(encoding="utf-8").strip()
        if stored:
            return stored
    identity = f"sqlite-{uuid.uuid4().hex[:12]}"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_text(identity + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return identity


def adopt_legacy_journal(journal: Path, data_dir: Path) -> bool:
    """Move an earlier version's journal (``DATA_DIR/runs_dbos.sqlite``) to ``journal``.

    Only when ``journal`` does not exist yet and lives in ``data_dir`` (the default run store,
    which the legacy journal belonged to): its unfinished runs then resume as before.
    """
    legacy = data_dir / LEGACY_JOURNAL
    if journal.exists() or not legacy.exists() or journal.parent.resolve() != data_dir.resolve():
        return False
    for suffix in ("", "-wal", "-shm"):
        source = legacy.with_name(legacy.name + suffix)
        if source.exists():
            os.replace(source, journal.with_name(journal.name + suffix))
    return True


class JournalLock:
    """An exclusive lock on a SQLite journal, held by the one process that executes it."""

    def __init__(self, journal: Path, *, holder: dict[str, Any] | None = None) -> None:
        self.journal = journal
        self.path = journal.with_name(journal.name + ".lock")
        self.holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **(holder or {}),
        }
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock; ConfigurationError naming the other process if it is taken."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = _read_holder(fd)
            os.close(fd)
            raise ConfigurationError(
                f"the run journal {self.journal} is in use by another process "
                f"({describe_holder(other)}); only one server may run on it. Stop that "
                "process, or give this server its own DATABASE_URL (or DATA_DIR)",
                context={"journal": str(self.journal), "holder": other},
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(self.holder) + "\n").encode(), 0)
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        """Give the lock back (the file stays; its content describes the last holder)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def describe_holder(holder: dict[str, Any]) -> str:
    """``pid 123 on host h, serving http://127.0.0.1:8000, since 2026-…`` (what is known)."""
    parts = []
    if holder.get("pid"):
        parts.append(f"pid {holder['pid']}")
    if holder.get("host"):
        parts.append(f"on host {holder['host']}")
    if holder.get("serving"):
        parts.append(f"serving {holder['serving']}")
    if holder.get("since"):
        parts.append(f"since {holder['since']}")
    return ", ".join(parts) or "unknown process"


__all__ = [
    "LEGACY_JOURNAL",
    "JournalLock",
    "adopt_legacy_journal",
    "describe_holder",
    "journal_identity",
]
