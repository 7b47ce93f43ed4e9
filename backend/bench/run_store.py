"""The run store's cost per event at 10, 200 and 1,000 nodes, and a run's cost per node.

Run: ``cd backend && .venv/bin/python -m bench.run_store``.

1. **Cost per event by run size.** A run of N nodes (10, 200, 1,000) is created in a fresh
   store; each node gets ``node_started`` and ``node_succeeded`` (a small output), emitted in
   order as the interpreter does, then the store is flushed. The figure is the wall time per
   event, overall and for the last 100 events (when the run is largest); the ratio of the
   1,000-node run to the 10-node run says whether an event's cost grows with the run. On
   SQLite (a file) and on PostgreSQL when ``TEST_DATABASE_URL`` (or the local default)
   answers.
2. **A run per node, store included, against LangGraph.** A chain of N call nodes (in-memory
   tools, no I/O) run by the interpreter with the run store (SQLite file) as its event sink,
   against a LangGraph ``StateGraph`` chain of N nodes compiled without a checkpointer
   (the peer ``make bench`` installs). Median of 5 runs each, per node.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from sqlalchemy import text

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.local import LocalSteps, MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import compile_plan
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.run_store import RunStore

SIZES = (10, 200, 1000)
CHAIN = 200
REPEATS = 5
PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
PG_SCHEMA = "bench_run_store"
console = Console()


def _store(url: str) -> RunStore:
    schema = PG_SCHEMA if url.startswith("postgres") else None
    engine = make_engine(url, schema=schema)
    migrate(engine)
    return RunStore(engine)


async def event_cost(url: str, nodes: int) -> tuple[float, float]:
    """Milliseconds per event over the whole run, and over its last 100 events."""
    store = _store(url)
    node_ids = [f"n{i}" for i in range(nodes)]
    run = await store.create_run(workflow_id="bench", params={}, node_ids=node_ids)
    events: list[ev.Event] = [ev.RunStarted(workflow_id="bench")]
    for i, node_id in enumerate(node_ids):
        events.append(ev.NodeStarted(node_id=node_id, kind="call", tool="t"))
        events.append(ev.NodeSucceeded(node_id=node_id, output={"i": i, "ok": True}, input={}))
    stamped = [
        e.stamped(run_id=run.run_id, seq=seq, at="2026-11-24T00:00:00+00:00")
        for seq, e in enumerate(events, start=1)
    ]
    head, tail = stamped[:-100], stamped[-100:]
    started = time.perf_counter()
    for event in head:
        await store.emit(event)
    await store.flush()
    middle = time.perf_counter()
    for event in tail:
        await store.emit(event)
    await store.flush()
    ended = time.perf_counter()
    await store.aclose()
    store.engine.dispose()
    return (ended - started) * 1000 / len(stamped), (ended - middle) * 1000 / len(tail)


def chain_document(nodes: int) -> WorkflowDocument:
    graph: dict[str, Any] = {}
    for i in range(nodes):
        node: dict[str, Any] = {"call": "step", "args": {"i": i}, "output": f"o{i}"}
        if i:
            node["depends_on"] = [f"s{i - 1}"]
        graph[f"s{i}"] = node
    return WorkflowDocument.model_validate({"workflows": {"chain": {"graph": graph}}})


async def ours_per_node(url: str, nodes: int) -> float:
    """Microseconds per node: the interpreter with the run store as its event sink."""
    document = chain_document(nodes)
    plan = compile_plan(document, "chain", {"step"})
    store = _store(url)
    times = []
    for _ in range(REPEATS):
        run = await store.create_run(workflow_id="chain", params={}, node_ids=list(plan.root.order))
        interpreter = Interpreter(
            plan,
            run_id=run.run_id,
            tools=MockTools({"step": {"ok": True}}),
            steps=LocalSteps(),
            events=store,
        )
        started = time.perf_counter()
        outcome = await interpreter.run({})
        await store.flush()
        times.append(time.perf_counter() - started)
        assert outcome.status == "succeeded", outcome.error
    await store.aclose()
    store.engine.dispose()
    return statistics.median(times) * 1e6 / nodes


async def langgraph_per_node(nodes: int) -> float | None:
    """Microseconds per node of a LangGraph chain without a checkpointer (None: not installed)."""
    try:
        from langgraph.graph import END, START, StateGraph
    except ImportError:
        return None
    from typing import TypedDict

    class State(TypedDict, total=False):
        last: int

    def make(i: int) -> Any:
        async def node(state: State) -> State:
            return {"last": i}

        return node

    builder = StateGraph(State)
    for i in range(nodes):
        builder.add_node(f"s{i}", make(i))
    builder.add_edge(START, "s0")
    for i in range(1, nodes):
        builder.add_edge(f"s{i - 1}", f"s{i}")
    builder.add_edge(f"s{nodes - 1}", END)
    graph = builder.compile()
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        await graph.ainvoke({"last": -1}, {"recursion_limit": nodes + 10})
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6 / nodes


def _postgres() -> str | None:
    """The PostgreSQL URL when it answers; the bench's tables go in a schema of their own."""
    url = os.environ.get("TEST_DATABASE_URL", PG_DEFAULT)
    try:
        engine = make_engine(url)
        with engine.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
            conn.execute(text(f"CREATE SCHEMA {PG_SCHEMA}"))
        engine.dispose()
    except Exception:
        return None
    return url


def _drop_pg_schema(url: str) -> None:
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {PG_SCHEMA} CASCADE"))
    engine.dispose()


async def main_async() -> dict[str, Any]:
    """Every figure of this bench (also printed)."""
    figures: dict[str, Any] = {"event_cost": {}, "chain": {}}
    with tempfile.TemporaryDirectory() as tmp:
        targets = {"sqlite": f"sqlite:///{Path(tmp) / 'bench.sqlite'}"}
        pg = _postgres()
        if pg is not None:
            targets["postgresql"] = pg
        table = Table(title="Run store: ms per event by run size (lower is better)")
        table.add_column("database")
        for size in SIZES:
            table.add_column(f"{size} nodes: all / last 100")
        table.add_column("1,000 / 10 (last 100)")
        for name, url in targets.items():
            costs = {size: await event_cost(url, size) for size in SIZES}
            figures["event_cost"][name] = costs
            growth = costs[SIZES[-1]][1] / costs[SIZES[0]][1]
            table.add_row(
                name,
                *[f"{costs[s][0]:.3f} / {costs[s][1]:.3f}" for s in SIZES],
                f"{growth:.2f}x",
            )
        console.print(table)
        if pg is not None:
            _drop_pg_schema(pg)
        ours = await ours_per_node(targets["sqlite"].replace("bench", "chain"), CHAIN)
        peer = await langgraph_per_node(CHAIN)
        figures["chain"] = {"ours_us": ours, "langgraph_us": peer}
        chain = Table(title=f"A {CHAIN}-node chain, µs per node (median of {REPEATS})")
        chain.add_column("interpreter + run store (SQLite)")
        chain.add_column("LangGraph, no checkpointer")
        chain.add_column("ratio (goal ≤ 2x)")
        chain.add_row(
            f"{ours:.1f}",
            "not installed" if peer is None else f"{peer:.1f}",
            "-" if peer is None else f"{ours / peer:.2f}x",
        )
        console.print(chain)
    return figures


def main() -> dict[str, Any]:
    """Run the bench and print its tables."""
    return asyncio.run(main_async())


if __name__ == "__main__":
    main()
