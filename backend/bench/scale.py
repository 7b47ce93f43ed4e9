"""10,000 durable runs on PostgreSQL with two replicas and with one: throughput, latency, size.

Each run is the 3-call workflow of ``bench/replicas.py`` (one tool called three times in a row,
each node naming its ``step``); the tool (a loopback server in this process) answers after
50 ms and counts every call it receives by ``(n, step)``. The runs are started through
replica A by concurrent ``POST /workflows/three_calls/runs`` (16 at a time); the shared run
queue lets every replica with room (``RUN_CONCURRENCY`` each) execute them. Completion is
watched with ``GET /runs/stats`` (counts by status) until no run is active, within a deadline.

Figures, for two replicas and then one, each on a fresh database:

- runs/s: runs over the time from the first run's creation to the last run's end (the run
  store's ``created_at`` and ``finished_at``);
- p50 / p99 run latency: each run's end minus its creation (queueing included), and its end
  minus its start (execution alone);
- the database's size per run: ``pg_database_size`` after the runs (replicas stopped, so every
  write-behind is flushed) minus before them (replicas started), over the runs;
- calls lost (an expected ``(n, step)`` the tool never saw) and duplicated (seen more than
  once). Nothing fails here, so both must be 0.

The error of each run that did not succeed is printed, and the replicas' logs are then kept.
``RUN_CONCURRENCY`` is 64 per replica (the default, 10, would cap a replica at about 67 runs/s
of three 50 ms calls; 64 leaves the CPU as the limit), ``DATABASE_POOL_SIZE`` 14. On a 2-core
machine a measurement of 10,000 runs takes 12-14 minutes (docs/performance.md, "Scale").

Usage: ``python -m bench.scale [--runs N] [--concurrency C] [--replicas 2,1] [--starters S]
[--deadline SECONDS]``. Needs the local PostgreSQL (``BENCH_DATABASE_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from bench.replicas import fresh_database, replica, slow_tool_server

RUNS = 10_000
CALL_S = 0.05
STEPS = (1, 2, 3)
RUN_CONCURRENCY = 64
STARTERS = 16
DEADLINE_S = 1800.0
ACTIVE = ("pending", "running", "waiting_input")
WORKFLOW_ID = "three_calls"
REPLICA_ENV = {"DATABASE_POOL_SIZE": "14"}
"""Each replica keeps at most 2 x 14 + 6 connections: two fit PostgreSQL's default 100 with room
for this harness. At the libraries' defaults (run store 5 + 10, journal 20) one measurement in six
ran out of server connections and failed three runs."""


async def start_runs(url: str, runs: int, starters: int) -> float:
    """Start runs ``0..runs-1`` through ``url``, ``starters`` at a time; the seconds it took."""
    numbers = iter(range(runs))
    limits = httpx.Limits(max_connections=starters, max_keepalive_connections=starters)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def starter() -> None:
            for n in numbers:  # shared: each number is taken by one starter
                answer = await client.post(
                    f"/workflows/{WORKFLOW_ID}/runs", json={"params": {"n": n}}
                )
                if answer.status_code != 202:
                    raise RuntimeError(f"run {n} refused: {answer.status_code} {answer.text}")

        began = time.monotonic()
        await asyncio.gather(*(starter() for _ in range(starters)))
        return time.monotonic() - began


def wait_until_ended(url: str, since: datetime, runs: int, deadline_s: float) -> dict[str, int]:
    """Poll ``GET /runs/stats`` until all ``runs`` exist and none is active; the counts."""
    params = {"since": since.isoformat(), "workflow_id": WORKFLOW_ID}
    deadline = time.monotonic() + deadline_s
    counts: dict[str, int] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        while time.monotonic() < deadline:
            answer = client.get("/runs/stats", params=params)
            answer.raise_for_status()
            counts = answer.json()["by_status"]
            if sum(counts.values()) >= runs and not any(counts.get(s, 0) for s in ACTIVE):
                return counts
            time.sleep(0.5)
    print(f"[scale] deadline of {deadline_s:.0f} s passed; counts {counts}")
    return counts


def _cpu_ticks() -> tuple[int, int]:
    """The machine's (busy, total) CPU ticks so far (``/proc/stat``; (0, 0) elsewhere)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except OSError:
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def _cpu_s() -> dict[str, float]:
    """CPU seconds used so far (``/proc``; empty elsewhere): by this process's children (the
    replicas), by the ``postgres`` processes (their reaped backends included) and by this
    process (the tool server, the starters, the polling)."""
    replicas = postgres = 0
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            text = stat.read_text()
            name = text[text.index("(") + 1 : text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            own, reaped = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
            if fields[1] == me:  # ppid
                replicas += own
            elif name == "postgres":
                postgres += own + reaped
    if not replicas and not postgres:
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    me_times = os.times()
    return {
        "replicas": replicas / tick,
        "postgres": postgres / tick,
        "bench": me_times.user + me_times.system,
    }


def _percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``values``, inclusive method."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(p) - 1]


def calls_lost_and_duplicated(calls: Counter[tuple[int, int]], runs: int) -> tuple[int, int]:
    """Expected ``(n, step)`` calls never seen, and calls seen beyond the first (or unexpected)."""
    expected = {(n, step) for n in range(runs) for step in STEPS}
    lost = sum(1 for key in expected if calls[key] == 0)
    duplicated = sum(count - 1 if key in expected else count for key, count in calls.items())
    return lost, max(duplicated, 0)


def _db_size(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(sa.text("SELECT pg_database_size(current_database())")).scalar_one()
        )


def _largest_tables(engine: sa.Engine, limit: int = 6) -> list[tuple[str, int]]:
    query = sa.text(
        "SELECT n.nspname || '.' || c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 2 DESC LIMIT :limit"
    )
    with engine.connect() as conn:
        return [(str(name), int(size)) for name, size in conn.execute(query, {"limit": limit})]


def measure(
    replicas: int,
    runs: int,
    concurrency: int,
    database_url: str,
    starters: int = STARTERS,
    deadline_s: float = DEADLINE_S,
) -> dict[str, Any]:
    """Start ``runs`` runs through the first of ``replicas`` replicas and measure them."""
    calls: Counter[tuple[int, int]] = Counter()
    with (
        tempfile.TemporaryDirectory(prefix="dt-bench-scale-") as tmp,
        slow_tool_server(CALL_S, calls) as tool_url,
        fresh_database(database_url) as database,
    ):
        engine = sa.create_engine(sa.make_url(database).set(drivername="postgresql+psycopg"))
        try:
            with contextlib.ExitStack() as stack:
                root = Path(tmp)
                urls = [
                    stack.enter_context(
                        replica(root, name, database, tool_url, concurrency, REPLICA_ENV)
                    )
                    for name in "ab"[:replicas]
                ]
                before = _db_size(engine)
                since = datetime.now(UTC) - timedelta(minutes=1)
                busy0, total0 = _cpu_ticks()
                cpu0 = _cpu_s()
                wall0 = time.monotonic()
                start_s = asyncio.run(start_runs(urls[0], runs, starters))
                counts = wait_until_ended(urls[0], since, runs, deadline_s)
                wall = time.monotonic() - wall0
                busy1, total1 = _cpu_ticks()
                cpu1 = _cpu_s()
            after = _db_size(engine)  # the replicas have stopped: every write is flushed
            tables = _largest_tables(engine)
            with engine.connect() as conn:
                rows = conn.execute(
                    sa.text(
                        "SELECT created_at, started_at, finished_at FROM runs "
                        "WHERE workflow_id = :w AND finished_at IS NOT NULL"
                    ),
                    {"w": WORKFLOW_ID},
                ).all()
                errors = Counter(
                    str(error)[:300]
                    for (error,) in conn.execute(
                        sa.text("SELECT error FROM runs WHERE status <> 'succeeded'")
                    )
                )
                executors = {
                    str(executor): int(count)
                    for executor, count in conn.execute(
                        sa.text(
                            "SELECT coalesce(executor_id, '?'), count(*) FROM dbos.workflow_status "
                            "GROUP BY 1 ORDER BY 1"
                        )
                    )
                }
        finally:
            engine.dispose()
        if errors:  # keep the replicas' logs, which say why
            kept = Path(tempfile.mkdtemp(prefix="dt-bench-scale-logs-"))
            for log in Path(tmp).glob("*.log"):
                shutil.copy(log, kept / log.name)
            print(f"[scale]   runs failed: the replicas' logs are kept in {kept}")
    lost, duplicated = calls_lost_and_duplicated(calls, runs)
    latencies = [(end - created).total_seconds() * 1000 for created, _, end in rows]
    executions = [(end - (began or created)).total_seconds() * 1000 for created, began, end in rows]
    span = (
        (max(r[2] for r in rows) - min(r[0] for r in rows)).total_seconds()
        if rows
        else float("nan")
    )
    cores = os.cpu_count() or 1
    figures: dict[str, Any] = {
        "replicas": replicas,
        "runs": runs,
        "ended": len(rows),
        "counts": {k: v for k, v in counts.items() if v},
        "runs_per_s": len(rows) / span if rows else 0.0,
        "span_s": span,
        "wall_s": wall,
        "start_s": start_s,
        "p50_ms": _percentile(latencies, 50),
        "p99_ms": _percentile(latencies, 99),
        "exec_p50_ms": _percentile(executions, 50),
        "exec_p99_ms": _percentile(executions, 99),
        "db_before_kib": before / 1024,
        "db_after_kib": after / 1024,
        "kib_per_run": (after - before) / 1024 / runs,
        "lost": lost,
        "duplicated": duplicated,
        "executors": executors,
        "machine_busy_cores": cores * (busy1 - busy0) / max(total1 - total0, 1),
        **{f"{k}_cpu_cores": (cpu1[k] - cpu0[k]) / wall for k in cpu0.keys() & cpu1.keys()},
    }
    largest = ", ".join(f"{name} {size / 2**20:.1f} MiB" for name, size in tables)
    print(
        f"[scale] {replicas} replica(s), RUN_CONCURRENCY={concurrency}, {starters} POSTs at a "
        f"time: {len(rows)}/{runs} runs ended (3 x {CALL_S * 1000:.0f} ms calls each), by status "
        f"{figures['counts']}; started "
        f"in {start_s:.1f} s ({runs / start_s:.0f}/s); first creation to last end "
        f"{span:.1f} s = {figures['runs_per_s']:.1f} runs/s; latency created->ended p50 "
        f"{figures['p50_ms']:.0f} ms, p99 {figures['p99_ms']:.0f} ms; started->ended p50 "
        f"{figures['exec_p50_ms']:.0f} ms, p99 {figures['exec_p99_ms']:.0f} ms\n"
        f"[scale]   database {before / 2**20:.1f} MiB before, {after / 2**20:.1f} MiB after: "
        f"{figures['kib_per_run']:.1f} KiB per run (largest: {largest})\n"
        f"[scale]   calls lost {lost}, duplicated {duplicated} (of {runs * len(STEPS)} at the "
        f"tool); executed by {executors}; CPU: machine {figures['machine_busy_cores']:.2f} of "
        f"{cores} cores busy; replicas {figures.get('replicas_cpu_cores', 0):.2f}, PostgreSQL "
        f"{figures.get('postgres_cpu_cores', 0):.2f}, this process (tool server, starters) "
        f"{figures.get('bench_cpu_cores', 0):.2f} cores"
    )
    for error, count in errors.most_common(5):
        print(f"[scale]   {count} run(s) not succeeded: {error}")
    return figures


def main(
    runs: int = RUNS,
    concurrency: int = RUN_CONCURRENCY,
    replicas: tuple[int, ...] = (2, 1),
    starters: int = STARTERS,
    deadline_s: float = DEADLINE_S,
) -> dict[str, Any]:
    """Measure each replica count on a fresh database; print and return the figures."""
    url = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    names = {1: "one", 2: "two"}
    figures: dict[str, Any] = {
        "runs": runs,
        "run_concurrency": concurrency,
        "call_ms": CALL_S * 1000,
        "starters": starters,
    }
    for count in replicas:
        figures[names.get(count, str(count))] = measure(
            count, runs, concurrency, url, starters, deadline_s
        )
    measured = [figures[k] for k in names.values() if k in figures]
    figures["lost"] = sum(m["lost"] for m in measured)
    figures["duplicated"] = sum(m["duplicated"] for m in measured)
    if "one" in figures and "two" in figures:
        figures["ratio"] = figures["two"]["runs_per_s"] / figures["one"]["runs_per_s"]
        print(
            f"[scale] {runs} runs at RUN_CONCURRENCY={concurrency}: two replicas "
            f"{figures['two']['runs_per_s']:.1f} runs/s, one {figures['one']['runs_per_s']:.1f}: "
            f"{figures['ratio']:.2f}x; calls lost {figures['lost']}, duplicated "
            f"{figures['duplicated']}"
        )
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--concurrency", type=int, default=RUN_CONCURRENCY)
    parser.add_argument(
        "--replicas", default="2,1", help="replica counts to measure, in order (default 2,1)"
    )
    parser.add_argument("--starters", type=int, default=STARTERS, help="POSTs at a time")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S, help="s per measurement")
    arguments = parser.parse_args()
    main(
        arguments.runs,
        arguments.concurrency,
        tuple(int(x) for x in arguments.replicas.split(",")),
        arguments.starters,
        arguments.deadline,
    )
