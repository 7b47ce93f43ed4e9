"""Shared fixtures: settings on temporary directories, the fake LLM, live servers, and the
database engine every store test runs on twice (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.settings import Settings
from tests.support.fake_llm import FakeLLM, running_fake_llm
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "travel"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEST_API_KEY = "sk-test-LLMKEY-5f2b9c71e0d4"
PG_URL = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(params=["sqlite", "postgresql"])
def blank_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An empty database: a SQLite file, then a fresh schema of the local PostgreSQL.

    PostgreSQL is ``TEST_DATABASE_URL`` (default the local server); it is never skipped
    silently: only ``DT_NO_POSTGRES=1`` skips it, on a machine without one.
    """
    if request.param == "sqlite":
        sqlite = make_engine(f"sqlite:///{tmp_path / 'store.sqlite'}")
        yield sqlite
        sqlite.dispose()
        return
    if os.environ.get("DT_NO_POSTGRES") == "1":
        pytest.skip("DT_NO_POSTGRES=1")
    url = PG_URL if "connect_timeout" in PG_URL else PG_URL + ("&" if "?" in PG_URL else "?")
    url = url if "connect_timeout" in url else url + "connect_timeout=5"
    schema = f"dt_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    postgres = make_engine(url, schema=schema)
    try:
        yield postgres
    finally:
        postgres.dispose()
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


@pytest.fixture
def engine(blank_engine: Engine) -> Engine:
    """A migrated database (each of ``blank_engine``'s)."""
    migrate(blank_engine)
    return blank_engine


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLLM]:
    with running_fake_llm() as fake:
        yield fake


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLM) -> Iterator[FakeLLM]:
    """The scripted fake LLM, emptied before and after each test."""
    _fake_llm_server.reset()
    yield _fake_llm_server
    _fake_llm_server.reset()


@pytest.fixture
def registry_root(tmp_path: Path) -> Path:
    """A registry root holding a copy of the travel example's tools."""
    root = tmp_path / "registry"
    shutil.copytree(EXAMPLES / "tools", root / "tools")
    return root


@pytest.fixture
def make_settings(tmp_path: Path, registry_root: Path) -> Callable[..., Settings]:
    """Settings on temporary directories, never reading a .env file."""

    def factory(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": free_port(),
            "data_dir": tmp_path / "data",
            "registry_config_path": registry_root / "config.yaml",
            "openai_api_key": None,
            "openai_base_url": None,
            "llm_model": "fake-model",
            "llm_max_retries": 0,
            "log_json": True,
            "log_level": "INFO",
            "allowed_target_hosts": [],
            "api_token": None,
            "durable_runs": False,  # DBOS is one per process: durable tests opt in
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    return factory
