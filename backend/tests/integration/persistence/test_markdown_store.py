"""MarkdownSessionStore on SQLite and on PostgreSQL: atomic read-change-write, concurrent writers
on one session, a change that raises writes nothing, purge; migration 0002 creates the table.

PostgreSQL is ``TEST_DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``); each
test gets its own schema, dropped afterwards. A server that does not answer fails the tests,
unless ``DT_NO_POSTGRES=1``.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect

from dynamic_tools.persistence.db import (
    alembic_config,
    metadata,
    migrate,
    upgrade_with_alembic,
    utc_now,
    write_transaction,
)
from dynamic_tools.persistence.markdown_store import MarkdownSessionStore


@pytest.fixture
def store(engine: Engine) -> MarkdownSessionStore:
    return MarkdownSessionStore(engine)


def state(title: str, counter: int = 0, status: str = "ready") -> dict[str, Any]:
    return {"status": status, "workflow": {"title": title}, "counter": counter}


def test_the_migrations_create_the_sessions_table_as_the_metadata_says(
    blank_engine: Engine,
) -> None:
    upgrade_with_alembic(blank_engine)
    with blank_engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        columns = {c["name"] for c in inspect(conn).get_columns("markdown_sessions")}
    assert columns == {
        "session_id",
        "status",
        "title",
        "state",
        "revision",
        "created_at",
        "updated_at",
        "owner",
    }


def test_migration_0002_downgrades_to_0001_and_upgrades_again(engine: Engine) -> None:
    with write_transaction(engine) as conn:
        command.downgrade(alembic_config(conn), "0001")
    with engine.connect() as conn:
        assert "markdown_sessions" not in inspect(conn).get_table_names()
        assert "runs" in inspect(conn).get_table_names()
    migrate(engine)
    with engine.connect() as conn:
        assert "markdown_sessions" in inspect(conn).get_table_names()


async def test_update_creates_then_changes_a_session_and_counts_revisions(
    store: MarkdownSessionStore,
) -> None:
    assert await store.get("s1") is None
    assert await store.revision("s1") == 0

    seen: list[dict[str, Any] | None] = []

    def create(current: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        seen.append(current)
        return state("Book a flight"), "created"

    assert await store.update("s1", create) == "created"
    assert seen == [None]
    assert await store.get("s1") == state("Book a flight")
    assert await store.revision("s1") == 1

    def bump(current: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
        assert current is not None
        new = {**current, "counter": current["counter"] + 1, "status": "running"}
        return new, new["counter"]

    assert await store.update("s1", bump) == 1
    assert (await store.get("s1") or {})["counter"] == 1
    assert await store.revision("s1") == 2
    with store.engine.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT status, title FROM markdown_sessions WHERE session_id = 's1'"
        ).one()
    assert tuple(row) == ("running", "Book a flight")


async def test_a_change_that_writes_nothing_or_raises_leaves_the_session_as_it_was(
    store: MarkdownSessionStore,
) -> None:
    await store.update("s1", lambda _: (state("T", 5), None))

    assert await store.update("s1", lambda current: (None, (current or {})["counter"])) == 5
    assert await store.revision("s1") == 1

    def explode(current: dict[str, Any] | None) -> tuple[dict[str, Any], None]:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await store.update("s1", explode)
    assert await store.get("s1") == state("T", 5)
    assert await store.revision("s1") == 1
    assert await store.update("s2", lambda current: (None, current)) is None
    assert await store.get("s2") is None


async def test_concurrent_changes_of_one_session_are_all_applied(
    store: MarkdownSessionStore,
) -> None:
    def bump(current: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
        counter = (current or state("T"))["counter"] + 1
        return state("T", counter), counter

    results = await asyncio.gather(*(store.update("shared", bump) for _ in range(16)))
    assert sorted(results) == list(range(1, 17))
    assert (await store.get("shared") or {})["counter"] == 16
    assert await store.revision("shared") == 16


async def test_sessions_are_independent_and_can_be_deleted_and_purged(
    store: MarkdownSessionStore,
) -> None:
    for name in ("a", "b", "c"):
        await store.update(name, lambda _, n=name: (state(n), None))
    assert await store.count() == 3
    assert await store.delete("b") is True
    assert await store.delete("b") is False
    assert await store.get("a") == state("a")
    assert await store.purge(idle_since=utc_now() - timedelta(hours=1)) == 0
    assert await store.purge(idle_since=utc_now() + timedelta(seconds=1)) == 2
    assert await store.count() == 0
