"""A durable foreach of 1,000 items x 20 ms at concurrency 50, against the ideal and LangGraph.

Run: ``cd backend && .venv/bin/python -m bench.durable_fan_out``.

- **ours**: the product's durable launcher on a fresh SQLite journal, run store included (a
  SQLite file; every run event stored, each finished item journaled), running a ``foreach``
  whose step calls a tool that takes 20 ms; timed from the start until the run store says
  the run has ended;
- **LangGraph**: the same fan-out (``Send`` per item, a node that takes 20 ms) with its SQLite
  checkpointer (``langgraph-checkpoint-sqlite``) and ``max_concurrency=50``;
- **ideal**: 1,000 / 50 x 20 ms = 0.4 s.

Each side runs ``REPEATS`` times alternately; medians are printed with the ratios (goals: at
most 2x the ideal, and ahead of LangGraph).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypedDict

from rich.console import Console
from rich.table import Table

from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import compile_plan
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.execution.durable_config import DurableConfig, sqlite_url
from dynamic_tools.execution.durable_launcher import DurableLauncher
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.item_journal import ItemJournal
from dynamic_tools.persistence.run_store import RunStore

ITEMS = 1000
CONCURRENCY = 50
WORK_S = 0.02
REPEATS = 3
IDEAL_S = ITEMS / CONCURRENCY * WORK_S
console = Console()

DOCUMENT = {
    "workflows": {
        "fan_out": {
            "params": {"items": {"type": "list", "required": True}},
            "graph": {
                "each": {
                    "type": "foreach",
                    "items": "$items",
                    "as": "n",
                    "max_iterations": ITEMS,
                    "concurrency": CONCURRENCY,
                    "step": {"call": "work", "args": {"n": "$n"}},
                    "output": "results",
                }
            },
            "outputs": {"results": "$results"},
        }
    }
}


class State(TypedDict, total=False):
    """LangGraph's state: the items, and the results its reducer adds up."""

    items: list[int]
    results: Annotated[list[int], operator.add]


class SlowTools:
    """A tool that takes ``WORK_S`` and echoes its argument."""

    def knows(self, tool: str) -> bool:
        return tool == "work"

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        await asyncio.sleep(WORK_S)
        return ToolResult(200, {"n": args["n"]})


async def ours_once(launcher: DurableLauncher, store: RunStore, plan: Any) -> float:
    """Seconds from start to the run store's terminal status."""
    params = plan.check_params({"items": list(range(ITEMS))})
    run = await store.create_run(workflow_id="fan_out", params=params, node_ids=["each"])
    started = time.perf_counter()
    await launcher.start(run_id=run.run_id, plan=plan, params=params)
    ended = await store.wait_until(run.run_id, lambda r: r.terminal, timeout_s=300)
    elapsed = time.perf_counter() - started
    assert ended.status == "succeeded", ended.error
    assert ended.result == {"results": [{"n": i} for i in range(ITEMS)]}, ended.error
    return elapsed


async def langgraph_once(folder: Path, index: int) -> float | None:
    """Seconds for LangGraph's fan-out with its SQLite saver (None: not installed)."""
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Send
    except ImportError:
        return None

    async def work(item: dict[str, int]) -> dict[str, list[int]]:
        await asyncio.sleep(WORK_S)
        return {"results": [item["n"]]}

    def fan(state: State) -> list[Any]:
        return [Send("work", {"n": n}) for n in state["items"]]

    builder = StateGraph(State)
    builder.add_node("work", work)
    builder.add_conditional_edges(START, fan, ["work"])
    builder.add_edge("work", END)
    async with AsyncSqliteSaver.from_conn_string(str(folder / f"lg-{index}.sqlite")) as saver:
        graph = builder.compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": f"t{index}"}, "max_concurrency": CONCURRENCY}
        started = time.perf_counter()
        state = await graph.ainvoke({"items": list(range(ITEMS)), "results": []}, config)
        elapsed = time.perf_counter() - started
    assert sorted(state["results"]) == list(range(ITEMS))
    return elapsed


async def measure() -> dict[str, Any]:
    """Median seconds of ours and of LangGraph."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = DurableConfig(
            database_url=sqlite_url(folder / "journal.sqlite"), executor_id="bench"
        )
        engine = make_engine(f"sqlite:///{folder / 'runs.sqlite'}")
        migrate(engine)
        store = RunStore(engine)
        journal = ItemJournal(engine)
        launcher = DurableLauncher(config, tools=SlowTools(), events=store, items=journal)
        await launcher.launch()
        plan = compile_plan(WorkflowDocument.model_validate(DOCUMENT), "fan_out", {"work"})
        ours: list[float] = []
        peer: list[float] = []
        try:
            for index in range(REPEATS):
                ours.append(await ours_once(launcher, store, plan))
                lg = await langgraph_once(folder, index)
                if lg is not None:
                    peer.append(lg)
            transactions = journal.transactions / REPEATS
        finally:
            await launcher.shutdown()
            await store.aclose()
            engine.dispose()
    ours_s = statistics.median(ours)
    peer_s = statistics.median(peer) if peer else None
    return {
        "ours_s": ours_s,
        "langgraph_s": peer_s,
        "vs_ideal": ours_s / IDEAL_S,
        "vs_langgraph": ours_s / peer_s if peer_s else None,
        "item_transactions": transactions,
    }


def main() -> dict[str, Any]:
    """Run and print the comparison."""
    figures = asyncio.run(measure())
    table = Table(
        title=f"Durable foreach, {ITEMS} items x {WORK_S * 1000:.0f} ms at concurrency "
        f"{CONCURRENCY}, SQLite (median of {REPEATS})"
    )
    for column in ("ideal", "ours", "LangGraph + SQLite saver", "ours / ideal (goal ≤ 2x)"):
        table.add_column(column)
    table.add_column("ours / LangGraph (goal < 1x)")
    peer = figures["langgraph_s"]
    table.add_row(
        f"{IDEAL_S:.2f} s",
        f"{figures['ours_s']:.2f} s",
        "not installed" if peer is None else f"{peer:.2f} s",
        f"{figures['vs_ideal']:.2f}x",
        "-" if peer is None else f"{figures['vs_langgraph']:.2f}x",
    )
    console.print(table)
    console.print(
        f"Item journal: {figures['item_transactions']:.0f} transactions per run of {ITEMS} items"
    )
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    arguments = parser.parse_args()
    result = main()
    if arguments.json:
        arguments.json.write_text(json.dumps(result), encoding="utf-8")
