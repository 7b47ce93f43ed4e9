"""When the SQLite listener polls: only when another connection committed, or the interval
passed (execution/sqlite_listener.py).

A real SQLite file in WAL mode, written by connections of its own (as another process, the CLI
or DBOS's own engine would); the poll is a spy that counts its calls.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from dynamic_tools.execution import sqlite_listener
from dynamic_tools.execution.sqlite_listener import CHECK_S, DataVersion, Listener, _data_version

LONG = 3600.0  # an interval no test waits out


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "journal.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE notifications (id INTEGER)")
        connection.commit()
    yield path


def commit(path: Path) -> None:
    """A write committed by another connection (as another process's ``send``)."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("INSERT INTO notifications VALUES (1)")
        connection.commit()


class Spy:
    def __init__(self) -> None:
        self.polls = 0

    def __call__(self) -> int:
        self.polls += 1
        return 1


def test_no_poll_runs_while_nothing_was_committed(journal: Path) -> None:
    version, spy = DataVersion(str(journal)), Spy()
    try:
        listener = Listener(spy, version, LONG)
        with contextlib.closing(sqlite3.connect(journal)) as reader:  # reads move nothing
            for _ in range(50):
                reader.execute("SELECT count(*) FROM notifications").fetchall()
                assert listener.check() == 0
        assert spy.polls == 0
    finally:
        version.close()


def test_a_commit_by_another_connection_makes_the_next_check_poll_once(journal: Path) -> None:
    version, spy = DataVersion(str(journal)), Spy()
    try:
        listener = Listener(spy, version, LONG)
        commit(journal)
        assert listener.check() == 1
        assert listener.check() == 0  # nothing new since
        for _ in range(5):  # a busy database: several commits between two checks, one poll
            commit(journal)
        assert listener.check() == 1
        assert listener.check() == 0
        assert spy.polls == 2
        assert listener.sleep_s == CHECK_S
    finally:
        version.close()


def test_the_interval_is_a_safety_net(journal: Path) -> None:
    version, spy = DataVersion(str(journal)), Spy()
    try:
        listener = Listener(spy, version, 0.0)  # always due
        assert listener.check() == 1
        assert listener.check() == 1
        assert spy.polls == 2
    finally:
        version.close()


def test_an_unreadable_data_version_polls_once_then_waits_for_the_interval(journal: Path) -> None:
    version, spy = DataVersion(str(journal)), Spy()
    listener = Listener(spy, version, LONG)
    version.close()  # every read now fails
    assert listener.check() == 1
    assert listener.check() == 0
    assert spy.polls == 1


def test_nothing_is_read_while_nothing_waits_and_a_new_waiter_gets_one_poll(
    journal: Path,
) -> None:
    version, spy, waits = DataVersion(str(journal)), Spy(), [False]
    try:
        listener = Listener(spy, version, 0.0, lambda: waits[0])  # even an interval always due
        commit(journal)
        for _ in range(5):
            assert listener.check() == 0
        assert spy.polls == 0
        waits[0] = True  # a recv registered: what was committed before is found by one poll
        assert listener.check() == 1
        assert spy.polls == 1
    finally:
        version.close()


def test_while_nothing_waits_the_data_version_is_not_even_read(journal: Path) -> None:
    version, spy, waits = DataVersion(str(journal)), Spy(), [False]
    listener = Listener(spy, version, LONG, lambda: waits[0])
    version.close()  # a read would fail, and a failed read polls once
    assert listener.check() == 0
    waits[0] = True
    assert listener.check() == 1
    assert spy.polls == 1


def test_without_a_data_version_only_the_interval_counts(journal: Path) -> None:
    spy = Spy()
    listener = Listener(spy, None, LONG)
    commit(journal)
    assert listener.check() == 0
    assert 0 < listener.sleep_s <= sqlite_listener.STOP_CHECK_S
    assert Listener(spy, None, 0.0).check() == 1


def test_a_missing_file_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "absent.sqlite"
    with pytest.raises(sqlite3.Error):
        DataVersion(str(missing))
    assert not missing.exists()


class _Url:
    """A system database as far as the listener reads it: its engine."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(url)


def test_a_journal_that_is_no_file_falls_back_to_the_interval_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(sqlite_listener, "_fallback_logged", False)
    monkeypatch.setattr(
        sqlite_listener.logger, "warning", lambda message, *a: warnings.append(message)
    )
    memory: Any = _Url("sqlite:///:memory:")
    assert _data_version(memory) is None
    assert _data_version(memory) is None
    assert len(warnings) == 1


def test_the_journal_file_is_watched(journal: Path) -> None:
    system_db: Any = _Url(f"sqlite:///{journal}")
    version = _data_version(system_db)
    assert version is not None
    try:
        assert not version.changed()
        commit(journal)
        assert version.changed()
    finally:
        version.close()


def test_a_failed_poll_is_tried_again_soon_not_at_the_interval(
    journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_listener, "RETRY_S", 0.0)
    calls: list[int] = []

    def poll() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database is locked")
        return 1

    version = DataVersion(str(journal))
    try:
        listener = Listener(poll, version, LONG)
        commit(journal)
        with pytest.raises(sqlite3.OperationalError):
            listener.check()
        assert listener.check() == 1  # nothing new committed, the change still unread
        assert listener.check() == 0
        assert len(calls) == 2
    finally:
        version.close()
