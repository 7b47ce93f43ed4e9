"""The run search over 100,000 runs, on SQLite and PostgreSQL: each filter's time per page.

Run: ``cd backend && .venv/bin/python -m bench.run_search`` (``--runs N`` for another size,
``--explain`` to print each query's plan as well).

100,000 runs are seeded in one bulk insert per 5,000 (with their ``run_values`` rows, as the
store writes them): eight workflows, created over the last 30 days, 70 % succeeded, 15 %
failed (one of a dozen error texts), 5 % cancelled, 10 % still active; a fifth started by a
schedule, a tenth by a webhook; params ``passenger`` (one of 5,000 names), ``city`` (one of
50), ``seats`` (a number); a succeeded run's outputs ``booking`` (unique) and ``total``.

Each search is then timed through the store (``RunStore.search`` / ``stats``: the query, the
count and reading the rows into records, as ``GET /runs`` does), 20 times after one warm-up:
p50 and p95 in ms. The goal (docs/run-search.md): every filter ≤ 200 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from sqlalchemy import Engine, insert, text

from dynamic_tools.persistence.db import make_engine, migrate, run_values, runs
from dynamic_tools.persistence.run_search import (
    Paging,
    RunFilter,
    filter_from_query,
    stats_range,
    value_rows,
)
from dynamic_tools.persistence.run_store import RunStore

RUNS = 100_000
CHUNK = 5_000
REPEATS = 20
GOAL_MS = 200.0
PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
PG_SCHEMA = "bench_run_search"
WORKFLOWS = [f"wf_{name}" for name in "abcdefgh"]
CITIES = [f"City{i}" for i in range(50)]
ERRORS = [
    "the API answered 503 Service Unavailable",
    "timeout after 30 s calling searchFlights",
    "seat map not found for flight",
    "payment declined by the card issuer",
    "the run was cancelled",
    "rate limited: retry after 60 s",
    "invalid passport number",
    "hotel fully booked on these dates",
    "connection reset by peer",
    "schema mismatch in bookFlight response",
    "the upstream gateway refused the request",
    "quota exceeded for the day",
]
console = Console()


def _row(i: int, rng: random.Random, now: datetime) -> tuple[dict[str, Any], list[dict[str, str]]]:
    run_id = uuid.UUID(int=rng.getrandbits(128)).hex
    created = now - timedelta(seconds=rng.uniform(0, 30 * 86400))
    roll = rng.random()
    status = (
        "succeeded"
        if roll < 0.70
        else "failed"
        if roll < 0.85
        else "cancelled"
        if roll < 0.90
        else rng.choice(["pending", "running", "waiting_input"])
    )
    params = {
        "passenger": f"Passenger{rng.randrange(5000)}",
        "city": rng.choice(CITIES),
        "seats": rng.randrange(1, 9),
    }
    ended = status in ("succeeded", "failed", "cancelled")
    finished = created + timedelta(seconds=rng.uniform(0.1, 600)) if ended else None
    result = {"booking": f"B-{i:06d}", "total": round(rng.uniform(50, 900), 2)}
    error = None
    if status == "failed":
        error = {"message": rng.choice(ERRORS), "node_id": "book"}
    elif status == "cancelled":
        error = {"message": "the run was cancelled"}
    trigger = rng.random()
    kind, name = (
        ("schedule", "morning")
        if trigger < 0.2
        else ("webhook", "github")
        if trigger < 0.3
        else (None, None)
    )
    row = {
        "run_id": run_id,
        "workflow_id": rng.choice(WORKFLOWS),
        "document_version": "v1",
        "status": status,
        "params": params,
        "result": result if status == "succeeded" else None,
        "error": error,
        "waiting": None,
        "event_count": 4,
        "created_at": created,
        "updated_at": finished or created,
        "started_at": created,
        "finished_at": finished,
        "redrive_of": None,
        "owner": "admin" if rng.random() < 0.8 else "key:k1",
        "trace_link": None,
        "trigger_kind": kind,
        "trigger_name": name,
        "trigger_time": created if kind else None,
    }
    values = value_rows(run_id, "params", params)
    if status == "succeeded":
        values += value_rows(run_id, "output", result)
    return row, values


def seed(engine: Engine, count: int) -> dict[str, Any]:
    """Insert ``count`` runs with their indexed values; what the searches look for."""
    rng = random.Random(34)
    now = datetime.now(UTC)
    sample: dict[str, Any] = {}
    started = time.perf_counter()
    with engine.begin() as conn:
        for start in range(0, count, CHUNK):
            rows, values = [], []
            for i in range(start, min(count, start + CHUNK)):
                row, indexed = _row(i, rng, now)
                rows.append(row)
                values += indexed
                if i == count // 2:
                    sample = {"passenger": row["params"]["passenger"]}
                if row["result"] is not None and "booking" not in sample:
                    sample["booking"] = row["result"]["booking"]
            conn.execute(insert(runs), rows)
            conn.execute(insert(run_values), values)
    if conn.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.execute(text("ANALYZE runs"))
            conn.execute(text("ANALYZE run_values"))
    else:
        with engine.begin() as conn:
            conn.execute(text("ANALYZE"))
    sample["seed_s"] = time.perf_counter() - started
    return sample


def searches(sample: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Each search as the query string ``GET /runs`` would get."""
    return {
        "first page, no filter": [],
        "param value (rare)": [("params.passenger", sample["passenger"])],
        "param value (2 %) + status": [("params.city", "City7"), ("status", "succeeded")],
        "output value": [("output.booking", sample["booking"])],
        "status + workflow": [("status", "failed"), ("workflow_id", "wf_c")],
        "several statuses": [("status", "pending,running,waiting_input")],
        "trigger schedule, last 7 days": [
            ("trigger", "schedule"),
            ("since", (datetime.now(UTC) - timedelta(days=7)).isoformat()),
        ],
        "error text": [("error", "PAYMENT DECLINED")],
        "ended in a range, by end": [
            ("ended_after", (datetime.now(UTC) - timedelta(days=3)).isoformat()),
            ("ended_before", (datetime.now(UTC) - timedelta(days=2)).isoformat()),
            ("sort", "-finished_at"),
        ],
        "owner's runs": [("owner", "key:k1"), ("status", "failed")],
    }


async def _timed(work: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    await work()
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        await work()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


async def measure(engine: Engine, sample: dict[str, Any], explain: bool) -> dict[str, Any]:
    """p50/p95 ms per search, stats and cursor page on one database."""
    store = RunStore(engine)
    figures: dict[str, Any] = {}
    for name, query in searches(sample).items():
        run_filter, paging = filter_from_query(query)

        async def page(f: RunFilter = run_filter, p: Paging = paging) -> None:
            await store.search(f, p)

        p50, p95 = await _timed(page)
        runs_found, _, total, _ = await store.search(run_filter, paging)
        figures[name] = {"p50": p50, "p95": p95, "rows": len(runs_found), "total": total}
        if explain:
            _explain(engine, run_filter, paging)
    # the third page by cursor
    run_filter, paging = filter_from_query([("status", "succeeded")])
    _, cursor, _, _ = await store.search(run_filter, paging, count=False)
    _, cursor, _, _ = await store.search(
        run_filter, Paging(sort=paging.sort, cursor=cursor), count=False
    )

    async def third() -> None:
        await store.search(run_filter, Paging(sort=paging.sort, cursor=cursor))

    p50, p95 = await _timed(third)
    figures["third page by cursor"] = {"p50": p50, "p95": p95}
    now = datetime.now(UTC)
    for name, days in (("stats, last 24 h", 1), ("stats, 30 days", 30)):
        ranged, bucket = stats_range(RunFilter(created_after=now - timedelta(days=days)), None, now)

        async def stats(f: RunFilter = ranged, b: int = bucket) -> None:
            await store.stats(f, b)

        p50, p95 = await _timed(stats)
        figures[name] = {"p50": p50, "p95": p95}
    await store.aclose()
    return figures


def _explain(engine: Engine, run_filter: RunFilter, paging: Paging) -> None:
    from sqlalchemy import select

    where = run_filter.conditions()
    query = select(runs.c.run_id).where(*where).order_by(runs.c.created_at.desc()).limit(50)
    compiled = query.compile(engine, compile_kwargs={"literal_binds": True})
    prefix = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN "
    with engine.connect() as conn:
        plan = conn.execute(text(prefix + str(compiled))).all()
    console.print(f"[dim]{compiled}[/dim]")
    for line in plan:
        console.print("   ", " | ".join(str(x) for x in line))


def _pg_engine(url: str) -> Engine | None:
    try:
        admin = make_engine(url + ("&" if "?" in url else "?") + "connect_timeout=5")
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
            conn.execute(text(f"CREATE SCHEMA {PG_SCHEMA}"))
        admin.dispose()
    except Exception as exc:
        console.print(f"PostgreSQL at {url} does not answer ({type(exc).__name__}): skipped")
        return None
    return make_engine(url, schema=PG_SCHEMA)


def _drop_pg(url: str) -> None:
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
    admin.dispose()


def run(count: int = RUNS, explain: bool = False, postgres: str | None = None) -> dict[str, Any]:
    """Seed and measure on SQLite (a file) and on PostgreSQL; print and return the figures."""
    import os

    figures: dict[str, Any] = {"runs": count}
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'search.sqlite'}")
        migrate(engine)
        sample = seed(engine, count)
        figures["sqlite"] = asyncio.run(measure(engine, sample, explain))
        figures["sqlite"]["seed_s"] = sample["seed_s"]
        engine.dispose()
    url = postgres or os.environ.get("TEST_DATABASE_URL", PG_DEFAULT)
    engine_or_none = _pg_engine(url)
    if engine_or_none is not None:
        try:
            migrate(engine_or_none)
            sample = seed(engine_or_none, count)
            figures["postgresql"] = asyncio.run(measure(engine_or_none, sample, explain))
            figures["postgresql"]["seed_s"] = sample["seed_s"]
        finally:
            engine_or_none.dispose()
            _drop_pg(url)
    report(figures)
    return figures


def report(figures: dict[str, Any]) -> None:
    """The table: each search, p50/p95 per database, and whether it is within the goal."""
    table = Table(title=f"Run search over {figures['runs']:,} runs (ms; goal ≤ {GOAL_MS:g} ms)")
    table.add_column("search")
    databases = [d for d in ("sqlite", "postgresql") if d in figures]
    for database in databases:
        table.add_column(f"{database} p50", justify="right")
        table.add_column(f"{database} p95", justify="right")
    table.add_column("rows / total", justify="right")
    table.add_column("within goal")
    names = [k for k in figures[databases[0]] if k != "seed_s"]
    for name in names:
        cells, worst = [], 0.0
        for database in databases:
            item = figures[database].get(name, {})
            cells += [f"{item.get('p50', 0):.1f}", f"{item.get('p95', 0):.1f}"]
            worst = max(worst, item.get("p95", 0))
        item = figures[databases[0]][name]
        counted = f"{item['rows']} / {item['total']}" if "rows" in item else "-"
        table.add_row(name, *cells, counted, "yes" if worst <= GOAL_MS else "NO")
    console.print(table)
    for database in databases:
        console.print(f"{database}: seeded in {figures[database]['seed_s']:.1f} s")


def main() -> dict[str, Any]:
    """``make bench``'s entry: the default size, no plans."""
    return run()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    arguments = parser.parse_args()
    result = run(arguments.runs, arguments.explain)
    if arguments.json:
        arguments.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    sys.exit(0)
