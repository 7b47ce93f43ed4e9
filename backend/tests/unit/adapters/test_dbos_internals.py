"""DBOS's internals the product relies on (adapters/dbos_internals.py) are still there.

Fails on a DBOS release that changes the version or the shape of any of them: read the new
release, adjust the adapter (and its callers' fallbacks), then the pin.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import threading

import sqlalchemy as sa
from dbos._core import ActiveWorkflowById
from dbos._dbos import DBOS, _get_dbos_instance
from dbos._sys_db import SystemDatabase, ThreadSafeEventDict
from dbos._sys_db_sqlite import SQLiteSystemDatabase

from dynamic_tools.adapters import dbos_internals


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_the_installed_dbos_is_the_one_the_adapter_was_written_for() -> None:
    assert importlib.metadata.version("dbos") == dbos_internals.DBOS_VERSION


def test_the_instance_exposes_its_system_database_and_active_workflows() -> None:
    assert callable(_get_dbos_instance) and _parameters(_get_dbos_instance) == []
    assert isinstance(inspect.getattr_static(DBOS, "_sys_db"), property)
    assert "self._active_workflows_set: ActiveWorkflowById" in inspect.getsource(DBOS.__init__)


def test_the_registry_of_active_workflows_has_its_buckets_lock_and_count() -> None:
    active = ActiveWorkflowById()
    active.add("run-1", "runs")
    active.add("run-2")
    assert dbos_internals.active_buckets(active) == {"run-1": [("runs", None)], "run-2": [None]}
    lock = dbos_internals.active_lock(active)
    assert isinstance(lock, type(threading.Lock()))
    assert _parameters(ActiveWorkflowById.count_for_queue) == ["self", "queue_name"]
    assert active.count_for_queue("runs") == 1


def test_the_waiter_map_is_keyed_by_waiter() -> None:
    assert _parameters(SystemDatabase._waiter) == ["self", "workflow_id", "name"]
    # DBOS's own key function, on a database with no keyed waiters
    fake = type("Db", (), {"_waiter": SystemDatabase._waiter, "_key_hint": lambda s, w: None})()
    assert dbos_internals.waiter_key(fake, "run-1", "answer") == "run-1::answer"
    assert {"add", "get", "pop", "snapshot"} <= set(vars(ThreadSafeEventDict))


def test_the_sqlite_listener_can_be_replaced_and_reads_what_it_needs() -> None:
    dbos_internals.check_sqlite_listener()  # raises on a DBOS without what it needs
    source = inspect.getsource(SystemDatabase) + inspect.getsource(SQLiteSystemDatabase)
    # read from DBOS's source: once replaced (another test started a durable run in this
    # process), the class attribute is our listener, not DBOS's
    assert "def _notification_listener(self) -> None:" in source
    for name in (
        "_notification_listener_polling_interval_sec",
        "_run_background_processes",
        "notifications_map",
        "workflow_events_map",
        "streams_map",
    ):
        assert f"self.{name}" in source, name
    # a waiter re-checks by itself after the fallback interval while a listener runs
    recheck = inspect.getsource(SystemDatabase._event_recheck_interval)
    assert "return self._notification_fallback_polling_interval" in recheck
    assert "self._event_recheck_interval()" in inspect.getsource(SystemDatabase.recv_async)
    fake = type("Db", (), {})()
    dbos_internals.set_waiter_recheck_s(fake, 3600)
    assert fake._notification_fallback_polling_interval == 3600.0  # type: ignore[attr-defined]
    fake._notification_listener_polling_interval_sec = 1  # type: ignore[attr-defined]
    fake._run_background_processes = True  # type: ignore[attr-defined]
    assert dbos_internals.polling_interval_s(fake) == 1.0
    assert dbos_internals.background_running(fake) is True


def test_the_file_of_a_sqlite_system_database_is_read_from_its_engine() -> None:
    assert "self.engine = " in inspect.getsource(SystemDatabase.__init__)

    def system_db(url: str) -> object:
        return type("Db", (), {"engine": sa.create_engine(url)})()

    assert dbos_internals.system_database_file(system_db("sqlite:////data/runs.sqlite")) == (
        "/data/runs.sqlite"
    )
    assert dbos_internals.system_database_file(system_db("sqlite:///runs.sqlite")) == "runs.sqlite"
    for other in (
        "sqlite:///:memory:",
        "sqlite://",
        "sqlite:///file:runs?mode=ro&uri=true",
        "postgresql+psycopg://u@127.0.0.1/db",
    ):
        assert dbos_internals.system_database_file(system_db(other)) is None, other
