"""A durable run's cost per step, run store included, against the bare DBOS floor.

Run: ``cd backend && .venv/bin/python -m bench.durable_floor [--postgres]``.

In one process (one DBOS launch, as the product does), on a fresh SQLite journal (or a fresh
PostgreSQL schema with ``--postgres``):

- **floor**: a DBOS workflow of N ``@DBOS.step`` no-ops (what any DBOS program pays per step);
- **ours**: the product's durable launcher running a chain of N call nodes through the
  interpreter, each call one durable step, tools in memory, every run event written to the
  run store (a SQLite file, or the same PostgreSQL database), until the run store says the run
  has ended.

Each side runs ``REPEATS`` times alternately; the medians per step and their ratio are printed
(goal: at most 1.1x on SQLite, 1.2x on PostgreSQL). Then a yield is answered ``RESUMES``
times in the process where it waits
and the time until its run ends (one durable step later) is printed (goal: within 50 ms), then
as often through the database by a client of its own, as another replica or the CLI answers
(goals: within 100 ms on SQLite, within 1 s on PostgreSQL); last, ``PAUSED`` runs wait at a
yield and the process's CPU share and added memory while idle are printed (goals: under 1 %
of a core, under 100 MiB), beside the CPU share of bare DBOS with as many workflows waiting in
``recv`` on the same database (``bench.dbos_idle``, with the queue the product polls on
PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID
from rich.console import Console
from rich.table import Table
from sqlalchemy import text

from bench.run_store import PG_DEFAULT, chain_document
from dynamic_tools.engine.local import MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import compile_plan
from dynamic_tools.execution.durable_client import DurableRunClient
from dynamic_tools.execution.durable_config import DurableConfig, sqlite_url
from dynamic_tools.execution.durable_launcher import DurableLauncher
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.run_store import RunStore

STEPS = 200
REPEATS = 5
PG_SCHEMA = "bench_durable"
console = Console()


@DBOS.step()
async def _noop(index: int) -> int:
    return index


@DBOS.workflow()
async def floor_workflow(steps: int) -> int:
    """N durable no-op steps: the floor every DBOS program pays."""
    total = 0
    for index in range(steps):
        total += await _noop(index)
    return total


async def _floor_once(steps: int) -> float:
    started = time.perf_counter()
    with SetWorkflowID(f"floor-{uuid.uuid4().hex}"):
        handle = await DBOS.start_workflow_async(floor_workflow, steps)
    await handle.get_result()
    return time.perf_counter() - started


async def _ours_once(launcher: DurableLauncher, store: RunStore, plan: Any, steps: int) -> float:
    run = await store.create_run(workflow_id="chain", params={}, node_ids=list(plan.root.order))
    started = time.perf_counter()
    await launcher.start(run_id=run.run_id, plan=plan, params={})
    ended = await store.wait_until(run.run_id, lambda r: r.terminal, timeout_s=120)
    elapsed = time.perf_counter() - started
    assert ended.status == "succeeded", ended.error
    return elapsed


RESUMES = 20
PAUSED = 1000
IDLE_S = 10.0
CANCEL_CONCURRENCY = 50  # cancels in flight at once when the idle measurement ends
PAUSE = {
    "workflows": {
        "pause": {
            "graph": {
                "ask": {"type": "yield", "message": "go?", "expects": {"ok": "bool"}},
                "after": {"call": "step", "depends_on": "ask"},
            }
        }
    }
}


async def _resume_once(launcher: DurableLauncher, store: RunStore, plan: Any) -> float:
    """Seconds from answering a waiting yield to the run's end (one durable step after it)."""
    run = await store.create_run(workflow_id="pause", params={}, node_ids=list(plan.root.order))
    await launcher.start(run_id=run.run_id, plan=plan, params={})
    await store.wait_until(run.run_id, lambda r: r.status == "waiting_input", timeout_s=30)
    await asyncio.sleep(0.05)  # the yield's recv is registered
    started = time.perf_counter()
    await launcher.resume(run.run_id, "ask", {"ok": True})
    ended = await store.wait_until(run.run_id, lambda r: r.terminal, timeout_s=30)
    assert ended.status == "succeeded", ended.error
    return time.perf_counter() - started


async def _resume_from_elsewhere_once(
    launcher: DurableLauncher, store: RunStore, plan: Any, client: DurableRunClient
) -> float:
    """As :func:`_resume_once`, the answer sent through the database by a client of its own
    (what another replica's resume does: DBOS ``send``, no wake-up in this process)."""
    run = await store.create_run(workflow_id="pause", params={}, node_ids=list(plan.root.order))
    await launcher.start(run_id=run.run_id, plan=plan, params={})
    await store.wait_until(run.run_id, lambda r: r.status == "waiting_input", timeout_s=30)
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    await client.resume(run.run_id, "ask", {"ok": True})
    ended = await store.wait_until(run.run_id, lambda r: r.terminal, timeout_s=30)
    assert ended.status == "succeeded", ended.error
    return time.perf_counter() - started


def _rss_mib() -> float:
    """This process's resident memory, MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _idle_cost(launcher: DurableLauncher, store: RunStore, plan: Any) -> dict[str, float]:
    """CPU share and memory of ``PAUSED`` runs waiting at a yield, measured over ``IDLE_S``."""
    gc.collect()
    before = _rss_mib()
    ids = []
    for _ in range(PAUSED):
        run = await store.create_run(workflow_id="pause", params={}, node_ids=["ask", "after"])
        await launcher.start(run_id=run.run_id, plan=plan, params={})
        ids.append(run.run_id)
    for run_id in ids:
        await store.wait_until(run_id, lambda r: r.status == "waiting_input", timeout_s=300)
    console.print(f"{PAUSED} runs waiting", highlight=False)
    await asyncio.sleep(2.0)  # settle: start-up work done
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.sleep(IDLE_S)
    share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    memory = _rss_mib() - before
    # Leave nothing waiting behind. A cancel returns once its run has ended, and on PostgreSQL
    # that is learnt by polling the run's status every 0.2 s: 1,000 one by one took minutes.
    slots = asyncio.Semaphore(CANCEL_CONCURRENCY)

    async def cancel(run_id: str) -> None:
        async with slots:
            await launcher.cancel(run_id)

    await asyncio.gather(*(cancel(run_id) for run_id in ids))
    return {"idle_cpu_pct": share * 100, "idle_mib": memory}


async def measure(postgres: bool) -> dict[str, float]:
    """Median seconds per step of the floor and of ours, and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        if postgres:
            url = os.environ.get("TEST_DATABASE_URL", PG_DEFAULT)
            admin = make_engine(url)
            with admin.begin() as conn:
                conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
                conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA}_runs CASCADE"))
                conn.execute(text(f"CREATE SCHEMA {PG_SCHEMA}_runs"))
            config = DurableConfig(
                database_url=url, schema=PG_SCHEMA, executor_id="bench", run_concurrency=64
            )
            engine = make_engine(url, schema=f"{PG_SCHEMA}_runs")
        else:
            config = DurableConfig(
                database_url=sqlite_url(Path(tmp) / "journal.sqlite"), executor_id="bench"
            )
            engine = make_engine(f"sqlite:///{Path(tmp) / 'runs.sqlite'}")
        migrate(engine)
        store = RunStore(engine)
        launcher = DurableLauncher(config, tools=MockTools({"step": {"ok": True}}), events=store)
        await launcher.launch()
        plan = compile_plan(chain_document(STEPS), "chain", {"step"})
        floor: list[float] = []
        ours: list[float] = []
        try:
            await _floor_once(10)  # warm-up
            await _ours_once(launcher, store, compile_plan(chain_document(10), "chain"), 10)
            for _ in range(REPEATS):
                floor.append(await _floor_once(STEPS))
                ours.append(await _ours_once(launcher, store, plan, STEPS))
            pause = compile_plan(WorkflowDocument.model_validate(PAUSE), "pause", {"step"})
            resumes = [await _resume_once(launcher, store, pause) for _ in range(RESUMES)]
            client = DurableRunClient(config)
            try:
                remote = [
                    await _resume_from_elsewhere_once(launcher, store, pause, client)
                    for _ in range(RESUMES)
                ]
            finally:
                client.close()
            idle = await _idle_cost(launcher, store, pause)
        finally:
            await launcher.shutdown()
            await store.aclose()
            engine.dispose()
            if postgres:
                with admin.begin() as conn:
                    conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
                    conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA}_runs CASCADE"))
                admin.dispose()
    floor_ms = statistics.median(floor) * 1000 / STEPS
    ours_ms = statistics.median(ours) * 1000 / STEPS
    return {
        "floor_ms": floor_ms,
        "ours_ms": ours_ms,
        "ratio": ours_ms / floor_ms,
        "resume_ms": statistics.median(resumes) * 1000,
        "remote_resume_ms": statistics.median(remote) * 1000,
        **idle,
    }


PEER = (sys.executable, "-m", "bench.dbos_idle")


def bare_dbos_idle(postgres: bool) -> float:
    """The idle CPU share (%) of bare DBOS with ``PAUSED`` workflows waiting in ``recv``, on
    the same database, with the queue the product registers on PostgreSQL (``bench.dbos_idle``,
    in a process of its own)."""
    with tempfile.TemporaryDirectory() as tmp:
        if postgres:
            url = os.environ.get("TEST_DATABASE_URL", PG_DEFAULT)
            queue_poll = str(DurableConfig.queue_poll_s)  # the default the product polls at
        else:
            url, queue_poll = sqlite_url(Path(tmp) / "peer.sqlite"), "0"
        schema = f"{PG_SCHEMA}_peer"
        try:
            done = subprocess.run(
                [*PEER, url, schema, queue_poll, str(PAUSED), str(IDLE_S)],
                capture_output=True,
                text=True,
                timeout=600,
                check=True,
            )
        finally:
            if postgres:
                admin = make_engine(url)
                with admin.begin() as conn:
                    conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
                admin.dispose()
    return float(json.loads(done.stdout.strip().splitlines()[-1])["idle_cpu_pct"])


def main(postgres: bool = False) -> dict[str, float]:
    """Run and print the comparison."""
    figures = asyncio.run(measure(postgres))
    figures["peer_idle_cpu_pct"] = bare_dbos_idle(postgres)
    table = Table(title=f"Durable step, ms per step ({STEPS} steps, median of {REPEATS})")
    table.add_column("database")
    table.add_column("bare DBOS steps")
    table.add_column("durable run + run store")
    table.add_column("ratio (goal ≤ 1.1x SQLite, ≤ 1.2x PostgreSQL)")
    table.add_row(
        "postgresql" if postgres else "sqlite",
        f"{figures['floor_ms']:.3f}",
        f"{figures['ours_ms']:.3f}",
        f"{figures['ratio']:.2f}x",
    )
    console.print(table)
    console.print(
        f"A yield answered in the process where it waits: the run ends "
        f"{figures['resume_ms']:.1f} ms later (median of {RESUMES}; goal: moves on within 50 ms)"
    )
    console.print(
        f"A yield answered through the database, as another replica does: the run ends "
        f"{figures['remote_resume_ms']:.1f} ms later (median of {RESUMES}; goal: within "
        f"{'1 s' if postgres else '100 ms'})"
    )
    console.print(
        f"{PAUSED} runs paused at a yield, idle for {IDLE_S:.0f} s: "
        f"{figures['idle_cpu_pct']:.2f} % of a core (goal < 1 %; bare DBOS with as many "
        f"workflows waiting in recv on the same database: {figures['peer_idle_cpu_pct']:.2f} %, "
        f"ratio {figures['idle_cpu_pct'] / figures['peer_idle_cpu_pct']:.2f}x), "
        f"{figures['idle_mib']:.0f} MiB more than before they started (goal < 100 MiB)"
    )
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    arguments = parser.parse_args()
    result = main(arguments.postgres)
    if arguments.json:
        arguments.json.write_text(json.dumps(result), encoding="utf-8")
