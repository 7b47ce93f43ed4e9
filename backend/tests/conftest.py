"""Shared fixtures: settings on temporary directories, the fake LLM, live servers, and the
database engine every store test runs on twice (SQLite and PostgreSQL).

Under pytest-xdist (``make test`` runs three workers) a test marked ``serial`` runs alone: the
workers share a readers-writer lock (a file of the run's temporary directory), each test holding it
shared and a ``serial`` test exclusively, from its setup to its teardown.
"""

from __future__ import annotations

import fcntl
import gc
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.settings import Settings
from tests.support.fake_llm import FakeLLM, running_fake_llm
from tests.support.node_peers import opted_out, prefetch
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "travel"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEST_API_KEY = "sk-test-LLMKEY-5f2b9c71e0d4"
#: what the scripted fake LLM does (everything OpenAI's endpoint does)
FAKE_LLM_CAPABILITIES = "required,named,auto,json_schema,json_object,strict,system,tool_definitions"
PG_URL = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Under xdist: a ``serial`` test waits for the other workers' tests and holds them off.

    A turnstile gives the serial test priority: it takes the gate, then the lock exclusively;
    the other tests pass the gate before they take the lock shared.
    """
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return (yield)
    worker_temp = item.config.option.basetemp  # the run's temporary directory / popen-gwN
    shared = Path(worker_temp).parent if worker_temp else Path(tempfile.gettempdir())
    base = shared / f"dt-tests-{run}"
    serial = item.get_closest_marker("serial") is not None
    with open(f"{base}.gate", "a") as gate, open(f"{base}.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            return (yield)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built; start the npm installs the collected modules name.

    The imported modules live as long as the session: frozen (``gc.freeze``), the collector's
    full collections, which the tests' large apps trigger often, no longer walk them.
    """
    if session.config.option.collectonly:
        return
    gc.collect()
    gc.freeze()
    if opted_out():
        return
    modules = {id(m): m for item in session.items if (m := getattr(item, "module", None))}
    sources = [m.npm_installs for m in modules.values() if hasattr(m, "npm_installs")]
    if sources:
        prefetch(sorted(sources, key=lambda f: f.__module__))


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
            # the scripted fake LLM behaves as OpenAI does: declared, so no probe takes its replies
            "llm_capabilities": FAKE_LLM_CAPABILITIES,
            "log_json": True,
            "log_level": "INFO",
            "allowed_target_hosts": [],
            "api_token": None,
            "durable_runs": False,  # DBOS is one per process: durable tests opt in
            # a full collection of this large process's heap per app (~0.3 s) buys tests nothing
            "freeze_startup_heap": False,
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    return factory
