"""The run search in the store, on SQLite and on PostgreSQL: the values it indexes as runs start
and end, every filter, sorts and cursor pages, counts over time, and 0012's backfill.

PostgreSQL is ``TEST_DATABASE_URL`` (its own schema per test); a server that does not answer
fails these tests unless ``DT_NO_POSTGRES=1``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Engine, select, update

from dynamic_tools.engine import events as ev
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.persistence.db import (
    alembic_config,
    migrate,
    run_values,
    runs,
    write_transaction,
)
from dynamic_tools.persistence.run_search import (
    VALUE_MAX,
    Paging,
    RunFilter,
    encode_cursor,
    filter_from_query,
    stats_range,
)
from dynamic_tools.persistence.run_store import RunStore, RunTrigger

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


async def _run(
    store: RunStore,
    workflow: str,
    params: dict[str, Any],
    *,
    minutes_ago: float,
    status: str = "pending",
    result: Any = None,
    error: dict[str, Any] | None = None,
    owner: str = "admin",
    trigger: RunTrigger | None = None,
    ended_minutes_ago: float | None = None,
) -> str:
    run = await store.create_run(workflow_id=workflow, params=params, owner=owner, trigger=trigger)
    if status in ("succeeded", "failed", "cancelled"):
        await store.emit(ev.run_ended(status, run_id=run.run_id, result=result, error=error))
    elif status == "running":
        await store.emit(ev.RunStarted(run_id=run.run_id, workflow_id=workflow))
    await store.flush()
    created = NOW - timedelta(minutes=minutes_ago)
    ended = None
    if status in ("succeeded", "failed", "cancelled"):
        ended = NOW - timedelta(minutes=ended_minutes_ago if ended_minutes_ago else minutes_ago - 1)
    with write_transaction(store.engine) as conn:
        conn.execute(
            update(runs)
            .where(runs.c.run_id == run.run_id)
            .values(created_at=created, finished_at=ended)
        )
    return run.run_id


@pytest.fixture
async def seeded(engine: Engine) -> tuple[RunStore, dict[str, str]]:
    store = RunStore(engine)
    schedule = RunTrigger("schedule", "morning", NOW)
    ids = {
        "ada_ok": await _run(
            store,
            "book",
            {"passenger": "Ada", "seats": 2, "vip": True, "tags": ["x"]},
            minutes_ago=50,
            status="succeeded",
            result={"booking": "BK1", "total": 120.5, "lines": [1, 2]},
        ),
        "bob_failed": await _run(
            store,
            "book",
            {"passenger": "Bob", "seats": 1},
            minutes_ago=40,
            status="failed",
            error={"message": "Payment DECLINED by issuer", "node_id": "pay"},
        ),
        "ada_sched": await _run(
            store,
            "report",
            {"passenger": "Ada"},
            minutes_ago=30,
            status="failed",
            error={"message": "call failed", "cause": {"api_message": "Quota exceeded 100%"}},
            trigger=schedule,
        ),
        "hook": await _run(
            store,
            "report",
            {"passenger": "Cy"},
            minutes_ago=20,
            status="running",
            trigger=RunTrigger("webhook", "github", NOW),
        ),
        "other": await _run(
            store, "book", {"passenger": "Ada"}, minutes_ago=10, owner="key:k2", status="running"
        ),
        "new": await _run(store, "book", {"passenger": "Dee"}, minutes_ago=5),
    }
    yield store, ids
    await store.aclose()


async def _ids(store: RunStore, query: list[tuple[str, str]]) -> list[str]:
    run_filter, paging = filter_from_query(query)
    found, _, total, exact = await store.search(run_filter, paging)
    assert exact and total >= len(found)
    return [run.run_id for run in found]


async def test_values_are_indexed_as_runs_start_and_end(
    seeded: tuple[RunStore, dict[str, str]],
) -> None:
    store, ids = seeded
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(run_values.c.scope, run_values.c.name, run_values.c.value)
            .where(run_values.c.run_id == ids["ada_ok"])
            .order_by(run_values.c.scope, run_values.c.name)
        ).all()
    assert [tuple(r) for r in rows] == [
        ("output", "booking", "BK1"),
        ("output", "total", "120.5"),
        ("params", "passenger", "Ada"),
        ("params", "seats", "2"),
        ("params", "vip", "true"),
    ]


async def test_each_filter(seeded: tuple[RunStore, dict[str, str]]) -> None:
    store, ids = seeded
    by = {v: k for k, v in ids.items()}

    async def names(*query: tuple[str, str]) -> list[str]:
        return [by[i] for i in await _ids(store, list(query))]

    assert await names(("params.passenger", "Ada")) == ["other", "ada_sched", "ada_ok"]
    assert await names(("params.passenger", "Ada"), ("params.seats", "2")) == ["ada_ok"]
    assert await names(("params.vip", "true")) == ["ada_ok"]
    assert await names(("output.booking", "BK1")) == ["ada_ok"]
    assert await names(("output.total", "120.5")) == ["ada_ok"]
    assert await names(("params.passenger", "ada")) == []  # values match exactly
    assert await names(("status", "failed,running")) == ["other", "hook", "ada_sched", "bob_failed"]
    assert await names(("status", "failed"), ("status", "pending")) == [
        "new",
        "ada_sched",
        "bob_failed",
    ]
    assert await names(("workflow_id", "report")) == ["hook", "ada_sched"]
    assert await names(("workflow_id", "report,book"), ("status", "pending")) == ["new"]
    assert await names(("owner", "key:k2")) == ["other"]
    assert await names(("trigger", "schedule")) == ["ada_sched"]
    assert await names(("trigger", "webhook,schedule")) == ["hook", "ada_sched"]
    assert await names(("trigger", "manual"), ("workflow_id", "report")) == []
    assert await names(("trigger_name", "github")) == ["hook"]
    since = (NOW - timedelta(minutes=35)).isoformat()
    until = (NOW - timedelta(minutes=10)).isoformat()
    assert await names(("since", since), ("until", until)) == ["hook", "ada_sched"]
    ended = (NOW - timedelta(minutes=55)).isoformat()
    assert await names(("ended_after", ended), ("ended_before", until)) == [
        "ada_sched",
        "bob_failed",
        "ada_ok",
    ]
    assert await names(("error", "declined")) == ["bob_failed"]
    assert await names(("error", "QUOTA EXCEEDED 100%")) == ["ada_sched"]  # the cause's words
    assert await names(("error", "100_%")) == []  # % and _ are literal
    assert await names(("error", "failed"), ("status", "succeeded")) == []


async def test_sorts_and_cursor_pages_are_stable(seeded: tuple[RunStore, dict[str, str]]) -> None:
    store, ids = seeded
    by = {v: k for k, v in ids.items()}
    run_filter, paging = filter_from_query([("limit", "2")])
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        found, cursor, total, _ = await store.search(
            run_filter, Paging(limit=2, cursor=cursor, sort=paging.sort)
        )
        pages.append([by.get(r.run_id, "late") for r in found])
        if len(pages) == 1:  # a run started after the first page is not on later pages
            await _run(store, "book", {"passenger": "Late"}, minutes_ago=0.5)
        if cursor is None:
            break
    assert pages == [["new", "other"], ["hook", "ada_sched"], ["bob_failed", "ada_ok"]]
    assert total == 7
    oldest = await _ids(store, [("sort", "created_at"), ("limit", "3")])
    assert [by[i] for i in oldest] == ["ada_ok", "bob_failed", "ada_sched"]
    by_end = filter_from_query([("sort", "-finished_at")])
    found, _, _, _ = await store.search(*by_end)
    assert [by[r.run_id] for r in found] == ["ada_sched", "bob_failed", "ada_ok"]
    first, cursor, _, _ = await store.search(by_end[0], Paging(sort="finished_at", limit=1))
    second, _, _, _ = await store.search(
        by_end[0], Paging(sort="finished_at", limit=1, cursor=cursor)
    )
    assert [by[r.run_id] for r in first + second] == ["ada_ok", "bob_failed"]


def test_malformed_input_names_the_field() -> None:
    cases = {
        "query.status": [("status", "failed,bogus")],
        "query.trigger": [("trigger", "cron")],
        "query.sort": [("sort", "status")],
        "cursor": [("cursor", "not-a-cursor")],
        "query.since": [("since", "yesterday")],
        "query.color": [("color", "red")],
        "query.params.x": [("params.x", "a\x00b")],
        "query.params.": [("params.", "x")],
        "query.limit": [("limit", "0")],
        "query.offset": [("offset", "2"), ("cursor", encode_cursor("-created_at", NOW, "r"))],
    }
    for path, query in cases.items():
        with pytest.raises(InvalidInputError) as caught:
            filter_from_query(query)
        assert caught.value.violations[0]["path"] == path, (path, caught.value.violations)
    first = filter_from_query([("sort", "created_at")])
    assert first[1].sort == "created_at"


async def test_a_long_value_is_searched_by_its_first_characters(engine: Engine) -> None:
    store = RunStore(engine)
    long = "x" * (VALUE_MAX + 40)
    run = await store.create_run(workflow_id="w", params={"note": long, "bad": "a\x00b"})
    found = await _ids(store, [("params.note", long)])
    assert found == [run.run_id]
    assert await _ids(store, [("params.note", "x" * VALUE_MAX + "other")]) == [run.run_id]
    assert await _ids(store, [("params.note", "x" * (VALUE_MAX - 1))]) == []
    assert await _ids(store, [("params.bad", "a")]) == []  # not indexed: never matches
    await store.aclose()


async def test_counts_by_status_workflow_and_time(seeded: tuple[RunStore, dict[str, str]]) -> None:
    store, _ = seeded
    ranged, bucket = stats_range(RunFilter(), 600, NOW)
    stats = await store.stats(ranged, bucket)
    assert stats.total == 6 and stats.bucket_s == 600
    assert stats.by_status == {
        "pending": 1,
        "running": 2,
        "waiting_input": 0,
        "succeeded": 1,
        "failed": 2,
        "cancelled": 0,
    }
    assert [(w["workflow_id"], w["total"]) for w in stats.by_workflow] == [
        ("book", 4),
        ("report", 2),
    ]
    assert len(stats.buckets) == 144 and sum(b["total"] for b in stats.buckets) == 6
    last = stats.buckets[-6:]  # ten minutes each, the last one 11:50 to 12:00
    assert [b["counts"] for b in last] == [
        {},
        {"succeeded": 1},
        {"failed": 1},
        {"failed": 1},
        {"running": 1},
        {"running": 1, "pending": 1},
    ]
    assert last[0]["start"] == (NOW - timedelta(minutes=60)).isoformat()
    owned = RunFilter(owner="key:k2")
    ranged, bucket = stats_range(owned, None, NOW)
    mine = await store.stats(ranged, bucket)
    assert mine.total == 1 and bucket == 1800
    narrow, _ = stats_range(RunFilter(workflow_ids=("report",), triggers=("webhook",)), 3600, NOW)
    assert (await store.stats(narrow, 3600)).by_status["running"] == 1
    with pytest.raises(InvalidInputError) as caught:
        stats_range(RunFilter(created_after=NOW - timedelta(days=30)), 60, NOW)
    assert caught.value.violations[0]["path"] == "bucket"


async def test_migration_0012_indexes_the_runs_already_there(blank_engine: Engine) -> None:
    migrate(blank_engine)
    store = RunStore(blank_engine)
    run = await store.create_run(workflow_id="w", params={"passenger": "Ada", "n": 3})
    await store.emit(ev.run_ended("succeeded", run_id=run.run_id, result={"booking": "B7"}))
    await store.aclose()
    with write_transaction(blank_engine) as conn:
        command.downgrade(alembic_config(conn), "0011")
        assert conn.execute(select(run_values)).all() == []
        command.upgrade(alembic_config(conn), "head")
    with blank_engine.connect() as conn:
        rows = conn.execute(
            select(run_values.c.scope, run_values.c.name, run_values.c.value).order_by(
                run_values.c.scope, run_values.c.name
            )
        ).all()
    assert [tuple(r) for r in rows] == [
        ("output", "booking", "B7"),
        ("params", "n", "3"),
        ("params", "passenger", "Ada"),
    ]


async def test_a_bulk_action_over_more_than_500_runs_is_refused_before_anything_changes(
    engine: Engine,
) -> None:
    from types import SimpleNamespace

    from bench.run_search import seed
    from dynamic_tools.access.principals import LOCAL
    from dynamic_tools.execution.run_bulk import MAX_BULK, bulk_act

    seed(engine, 4000)  # a fifth failed or cancelled: about 800 runs a redrive applies to
    store = RunStore(engine)
    try:
        before = await store.search(RunFilter(statuses=("failed", "cancelled")), Paging(limit=1))
        assert before[2] > MAX_BULK
        service: Any = SimpleNamespace(store=store)
        with pytest.raises(InvalidInputError) as caught:
            await bulk_act(service, "redrive", RunFilter(statuses=("failed",)), principal=LOCAL)
        assert caught.value.violations[0]["path"] == "filter"
        assert f"more than {MAX_BULK}" in caught.value.message
        after = await store.search(RunFilter(statuses=("failed", "cancelled")), Paging(limit=1))
        assert after[2] == before[2]
    finally:
        await store.aclose()
