"""A fresh PostgreSQL database per test, on the local server (``TEST_DATABASE_URL``).

When the server does not answer the test fails, unless ``DT_NO_POSTGRES=1`` (then it skips):
CI has PostgreSQL, so these tests never skip there silently.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_url() -> str:
    """The server to test against."""
    return os.environ.get("TEST_DATABASE_URL", DEFAULT_URL)


def admin_engine(url: str) -> sa.Engine:
    """An autocommit engine on ``url`` (for CREATE/DROP DATABASE)."""
    return sa.create_engine(
        sa.make_url(url).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )


def require_postgres(url: str) -> sa.Engine:
    """An admin engine once the server answers; fails the test (or skips, by choice) if not."""
    engine = admin_engine(url)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception as exc:
        engine.dispose()
        if os.environ.get("DT_NO_POSTGRES") == "1":
            pytest.skip("DT_NO_POSTGRES=1")
        pytest.fail(f"PostgreSQL at {url} does not answer ({exc}); set DT_NO_POSTGRES=1 to skip")
    return engine


@contextmanager
def fresh_database(prefix: str = "dt_test") -> Iterator[str]:
    """The URL of a new, empty database, dropped (with its connections) afterwards."""
    url = postgres_url()
    engine = require_postgres(url)
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with engine.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield str(sa.make_url(url).set(database=name).render_as_string(hide_password=False))
    finally:
        with engine.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


__all__ = ["admin_engine", "fresh_database", "postgres_url", "require_postgres"]


@contextmanager
def fresh_schema(prefix: str = "dt_test") -> Iterator[tuple[str, str]]:
    """``(url, schema)`` of a new schema on the test server, dropped (cascading) afterwards.

    Cheaper than a database: tests that open several engines on one store (replicas) give
    each the schema (``make_engine(url, schema=...)``). ``DT_NO_POSTGRES=1`` skips.
    """
    from dynamic_tools.persistence.db import make_engine

    if os.environ.get("DT_NO_POSTGRES") == "1":
        pytest.skip("DT_NO_POSTGRES=1")
    url = postgres_url()
    url = (
        url
        if "connect_timeout" in url
        else url + ("&" if "?" in url else "?") + "connect_timeout=5"
    )
    schema = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = make_engine(url)
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        yield url, schema
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    finally:
        admin.dispose()
