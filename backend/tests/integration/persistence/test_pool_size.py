"""``DATABASE_POOL_SIZE``: a replica's connections to PostgreSQL are bounded per pool.

Two replicas at the libraries' defaults keep up to 2 x (15 + 20 + 6) connections, which the
scale run found too close to a server's default ``max_connections`` of 100. The setting bounds
the run store's pool (no overflow) and DBOS's journal pool alike.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dynamic_tools.bootstrap import make_launcher
from dynamic_tools.engine.local import MockTools
from dynamic_tools.execution.durable_config import dbos_config
from dynamic_tools.execution.durable_launcher import DurableLauncher
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.settings import Settings
from tests.support.postgres import fresh_database


def test_the_run_store_pool_opens_no_connection_beyond_its_size() -> None:
    with fresh_database() as url:
        engine = make_engine(url, pool_size=2)
        try:
            held = [engine.connect(), engine.connect()]
            third_connected = threading.Event()

            def third() -> None:
                with engine.connect():
                    third_connected.set()

            waiter = threading.Thread(target=third, daemon=True)
            waiter.start()
            assert not third_connected.wait(0.5)  # no overflow: it waits for a connection
            held.pop().close()
            assert third_connected.wait(10)  # and gets the one given back
            waiter.join(10)
            for connection in held:
                connection.close()
            assert engine.pool.size() == 2
        finally:
            engine.dispose()


def test_without_the_setting_the_library_default_stays() -> None:
    with fresh_database() as url:
        engine = make_engine(url)
        try:
            assert engine.pool.size() == 5
        finally:
            engine.dispose()


@pytest.mark.parametrize("size", [None, 4])
def test_the_setting_reaches_the_journal_pool(
    size: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    if size is None:
        monkeypatch.delenv("DATABASE_POOL_SIZE", raising=False)
    else:
        monkeypatch.setenv("DATABASE_POOL_SIZE", str(size))
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    assert settings.database_pool_size == size
    engine = make_engine(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    migrate(engine)
    try:  # not launched: only its configuration is looked at
        launcher = make_launcher(settings, tools=MockTools({}), store=RunStore(engine))
        assert isinstance(launcher, DurableLauncher)
        config = dbos_config(launcher.config)
        assert config.get("sys_db_pool_size") == size
    finally:
        engine.dispose()


def test_a_pool_size_out_of_range_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_POOL_SIZE", "0")
    with pytest.raises(ValueError, match="database_pool_size"):
        Settings(_env_file=None)  # type: ignore[call-arg]
