"""Atomic file writes for definitions kept in the runtime registry directory.

A reader never sees a half-written file: content goes to a temporary file in the same
directory, is flushed and fsynced, then renamed over the target (rename is atomic on POSIX),
and the directory is fsynced so the rename survives a crash.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def content_version(content: str | bytes) -> str:
    """The version of a document: the SHA-256 of its content, hex, first 16 characters."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()[:16]


def write_atomic(path: Path, content: str) -> None:
    """Write ``content`` to ``path`` atomically (temp file + fsync + rename + dir fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def remove_atomic(path: Path) -> None:
    """Remove ``path`` and fsync its directory."""
    path.unlink()
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
