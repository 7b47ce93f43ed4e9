"""One process per SQLite journal: the lock names its holder; the identity is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynamic_tools.errors import ConfigurationError
from dynamic_tools.execution.journal_lock import (
    JournalLock,
    adopt_legacy_journal,
    journal_identity,
)


def test_a_second_holder_is_refused_with_the_first_named(tmp_path: Path) -> None:
    journal = tmp_path / "runs.journal.sqlite"
    first = JournalLock(journal, holder={"serving": "http://127.0.0.1:8000"})
    first.acquire()
    try:
        second = JournalLock(journal)
        with pytest.raises(ConfigurationError) as refused:
            second.acquire()
        message = refused.value.message
        assert str(journal) in message and f"pid {os.getpid()}" in message
        assert "serving http://127.0.0.1:8000" in message and "since " in message
        assert not second.held
    finally:
        first.release()
    again = JournalLock(journal)
    again.acquire()  # free once released
    again.release()


def test_the_lock_is_free_once_its_process_is_killed(tmp_path: Path) -> None:
    journal = tmp_path / "runs.journal.sqlite"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path;"
            "from dynamic_tools.execution.journal_lock import JournalLock;"
            f"JournalLock(Path({str(journal)!r})).acquire(); print('held', flush=True);"
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        with pytest.raises(ConfigurationError, match=f"pid {holder.pid}"):
            JournalLock(journal).acquire()
    finally:
        holder.kill()
        holder.wait(timeout=10)
    lock = JournalLock(journal)
    lock.acquire()  # kill -9 left nothing to clean up
    lock.release()


def test_the_identity_is_made_once_and_kept_beside_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "runs.journal.sqlite"
    first = journal_identity(journal)
    assert first.startswith("sqlite-")
    assert journal_identity(journal) == first
    assert (tmp_path / "runs.journal.sqlite.executor").read_text().strip() == first


def test_a_legacy_journal_of_the_data_dir_is_moved_beside_the_default_store(
    tmp_path: Path,
) -> None:
    (tmp_path / "runs_dbos.sqlite").write_text("journal")
    (tmp_path / "runs_dbos.sqlite-wal").write_text("wal")
    journal = tmp_path / "dynamic_tools.journal.sqlite"
    assert adopt_legacy_journal(journal, tmp_path)
    assert journal.read_text() == "journal"
    assert (tmp_path / "dynamic_tools.journal.sqlite-wal").read_text() == "wal"
    assert not (tmp_path / "runs_dbos.sqlite").exists()
    assert not adopt_legacy_journal(journal, tmp_path)  # only once
    elsewhere = tmp_path / "other" / "x.journal.sqlite"
    (tmp_path / "runs_dbos.sqlite").write_text("another")
    assert not adopt_legacy_journal(elsewhere, tmp_path)  # not the data dir's store
