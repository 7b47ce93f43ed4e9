"""Fixtures of the durable-run tests: a fresh system database per test, and DBOS launches.

PostgreSQL is taken from ``TEST_DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/
test``); each test gets its own schema. When it does not answer the tests fail, unless
``DT_NO_POSTGRES=1``, which skips the PostgreSQL variants. DBOS is a process-wide singleton:
each in-process test launches it and shuts it down again.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from dynamic_tools.engine.local import EventList
from dynamic_tools.execution.durable_config import DurableConfig, sqlite_url
from dynamic_tools.execution.durable_launcher import DurableLauncher


def pg_engine(url: str) -> sa.Engine:
    return sa.create_engine(sa.make_url(url).set(drivername="postgresql+psycopg"))


@pytest.fixture(scope="session")
def postgres_url() -> str | None:
    """The test PostgreSQL; the tests fail when it does not answer, unless DT_NO_POSTGRES=1."""
    url = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    try:
        engine = pg_engine(url)
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
        engine.dispose()
    except Exception as exc:
        if os.environ.get("DT_NO_POSTGRES") == "1":
            return None
        pytest.fail(f"PostgreSQL at {url} does not answer ({exc}); set DT_NO_POSTGRES=1 to skip")
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def config(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DurableConfig]:
    """A fresh system database: a SQLite file, or a PostgreSQL schema of its own."""
    fast = {"notification_poll_s": 0.05, "cancel_poll_s": 0.1, "executor_id": "test-a"}
    if request.param == "sqlite":
        yield DurableConfig(database_url=sqlite_url(tmp_path / "runs.sqlite"), **fast)
        return
    postgres_url = request.getfixturevalue("postgres_url")
    if postgres_url is None:
        pytest.skip("DT_NO_POSTGRES=1")
    schema = f"dt_test_{uuid.uuid4().hex[:12]}"
    try:
        yield DurableConfig(database_url=postgres_url, schema=schema, **fast)
    finally:
        engine = pg_engine(postgres_url)
        with engine.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()


Launch = Callable[..., Awaitable[DurableLauncher]]


@pytest.fixture
def pg_config(postgres_url: str | None) -> Iterator[DurableConfig]:
    """A PostgreSQL journal in a schema of its own (executor ``test-a``), dropped afterwards."""
    if postgres_url is None:
        pytest.skip("DT_NO_POSTGRES=1")
    schema = f"dt_test_{uuid.uuid4().hex[:12]}"
    try:
        yield DurableConfig(
            database_url=postgres_url, schema=schema, executor_id="test-a", cancel_poll_s=0.1
        )
    finally:
        engine = pg_engine(postgres_url)
        with engine.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()


@pytest.fixture
async def launch() -> AsyncIterator[Launch]:
    """Launches DBOS in this process (one launcher at a time) and always shuts it down."""
    launched: list[DurableLauncher] = []

    async def factory(
        config: DurableConfig, tools: Any, events: Any = None, items: Any = None
    ) -> DurableLauncher:
        launcher = DurableLauncher(config, tools=tools, events=events or EventList(), items=items)
        await launcher.launch()
        launched.append(launcher)
        return launcher

    try:
        yield factory
    finally:
        for launcher in launched:
            await launcher.shutdown()
