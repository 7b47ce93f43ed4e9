"""The performance goals, one row each, from the figures the benches of one ``make bench`` run
measured (every ratio is against a peer measured in the same run).

A row's ``item`` is its goal's number in docs/performance.md's list of goals; ``kept`` marks a
goal met earlier that must not regress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class Goal:
    """One goal: what is measured, its figure against the peer, and the bound."""

    item: str
    figure: str
    value: float | None
    bound: float | None  # None: shown for context, no goal of its own
    at_most: bool = True
    unit: str = "x"

    @property
    def met(self) -> bool | None:
        """Whether the figure is within the bound (None when it was not measured)."""
        if self.value is None or self.bound is None:
            return None
        return self.value <= self.bound if self.at_most else self.value >= self.bound

    def shown(self) -> tuple[str, str, str, str, str]:
        """The table row."""
        value = "not measured" if self.value is None else f"{self.value:.2f}{self.unit}"
        bound = (
            "-"
            if self.bound is None
            else f"{'≤' if self.at_most else '≥'} {self.bound:g}{self.unit}"
        )
        met = {True: "yes", False: "no", None: "-"}[self.met]
        return self.item, self.figure, value, bound, met


def _get(figures: dict[str, Any], *path: str) -> Any:
    value: Any = figures
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _ratio(ours: Any, peer: Any) -> float | None:
    return ours / peer if isinstance(ours, int | float) and isinstance(peer, int | float) else None


def _slowest(searches: Any) -> float | None:
    """The highest p95 of the run search bench's searches on one database (None: not run)."""
    if not isinstance(searches, dict):
        return None
    p95s = [item["p95"] for item in searches.values() if isinstance(item, dict) and "p95" in item]
    return max(p95s) if p95s else None


def goals(figures: dict[str, Any]) -> list[Goal]:
    """The rows, from ``figures`` keyed by bench (missing figures show as not measured)."""
    sqlite, pg = figures.get("durable_sqlite", {}), figures.get("durable_postgres", {})
    chain = _get(figures, "run_store", "chain") or {}
    ui = figures.get("ui_load") or {}
    workflow, run_view = ui.get("workflow") or {}, ui.get("run view") or {}
    return [
        Goal("1", "durable step / bare DBOS step, SQLite", sqlite.get("ratio"), 1.1),
        Goal("1", "durable step / bare DBOS step, PostgreSQL", pg.get("ratio"), 1.2),
        Goal(
            "kept",
            "non-durable run per node / LangGraph",
            _ratio(chain.get("ours_us"), chain.get("langgraph_us")),
            2.0,
        ),
        Goal("kept", "fan-out 1,000 x 20 ms / ideal", _get(figures, "fan_out", "vs_ideal"), 2.0),
        Goal(
            "kept",
            "fan-out / LangGraph + SQLite saver",
            _get(figures, "fan_out", "vs_langgraph"),
            1.0,
        ),
        Goal("kept", "resume in its process, SQLite", sqlite.get("resume_ms"), 50, unit=" ms"),
        Goal(
            "3",
            "a yield answered through the database, SQLite",
            sqlite.get("remote_resume_ms"),
            100,
            unit=" ms",
        ),
        Goal(
            "kept",
            "resume from another replica, PostgreSQL",
            pg.get("remote_resume_ms"),
            1000,
            unit=" ms",
        ),
        Goal("3", "1,000 paused runs idle, SQLite", sqlite.get("idle_cpu_pct"), 1.0, unit=" %"),
        Goal("3", "1,000 paused runs idle, PostgreSQL", pg.get("idle_cpu_pct"), None, unit=" %"),
        Goal(
            "3",
            "  the same / bare DBOS with 1,000 waiting, PostgreSQL",
            _ratio(pg.get("idle_cpu_pct"), pg.get("peer_idle_cpu_pct")),
            1.0,
        ),
        Goal(
            "kept",
            "1,000 paused runs, added memory, SQLite",
            sqlite.get("idle_mib"),
            100,
            unit=" MiB",
        ),
        Goal("kept", "make run: ready", _get(figures, "startup", "ready_s"), 2.0, unit=" s"),
        Goal("4", "make run: idle memory", _get(figures, "startup", "idle_mib"), 120, unit=" MiB"),
        Goal(
            "4",
            "idle memory at 1,000 tools / bare MCP SDK",
            _get(figures, "mcp", "sdk", "rss_ratio"),
            1.3,
        ),
        Goal(
            "kept",
            "tools/list server CPU / bare MCP SDK",
            _get(figures, "mcp", "sdk", "list_cpu_ratio"),
            1.1,
        ),
        Goal(
            "2",
            "POST /workflow throughput / minimal endpoint",
            _get(figures, "overhead", "throughput_ratio"),
            0.95,
            at_most=False,
        ),
        Goal(
            "2",
            "POST /workflow CPU per request / minimal endpoint",
            _get(figures, "overhead", "cpu_ratio"),
            1.1,
        ),
        Goal(
            "2",
            "POST /workflow median latency / minimal endpoint",
            _get(figures, "overhead", "overhead_ratio"),
            1.3,
        ),
        Goal("5", "UI workflow page ready, cold", workflow.get("ready_ms"), 300, unit=" ms"),
        Goal(
            "5",
            "  workflow page ready / uncompressed build",
            _ratio(workflow.get("ready_ms"), workflow.get("identity_ready_ms")),
            1.0,
        ),
        Goal("5", "UI run view (50 nodes) ready, cold", run_view.get("ready_ms"), 300, unit=" ms"),
        Goal(
            "5",
            "  run view ready / uncompressed build",
            _ratio(run_view.get("ready_ms"), run_view.get("identity_ready_ms")),
            1.0,
        ),
        Goal(
            "5",
            "run list of 100,000 runs, slowest search p95, SQLite",
            _slowest(_get(figures, "run_search", "sqlite")),
            200,
            unit=" ms",
        ),
        Goal(
            "5",
            "run list of 100,000 runs, slowest search p95, PostgreSQL",
            _slowest(_get(figures, "run_search", "postgresql")),
            200,
            unit=" ms",
        ),
        Goal(
            "6",
            "OpenAPI parse + convert (GitHub) / json.loads",
            _get(figures, "openapi_import", "json_ratio"),
            2.0,
        ),
        Goal(
            "6",
            "  parse alone / json.loads",
            _get(figures, "openapi_import", "parse_ratio"),
            None,
        ),
        Goal(
            "6",
            "  OpenAPI import / FastMCP from_openapi (its bench's own goal ≤ 1x)",
            _get(figures, "openapi_import", "ratio"),
            None,
        ),
        *_scale_goals(figures.get("scale") or {}),
    ]


def _scale_goals(scale: dict[str, Any]) -> list[Goal]:
    """Item 7: the scale run's rows (``bench/scale.py``), two replicas and one."""
    runs = scale.get("runs")
    of = f"{runs:,} durable runs" if isinstance(runs, int) else "durable runs"
    two, one = scale.get("two") or {}, scale.get("one") or {}
    missed = (
        scale["lost"] + scale["duplicated"]
        if isinstance(scale.get("lost"), int) and isinstance(scale.get("duplicated"), int)
        else None
    )
    rows = [
        Goal("7", f"{of}, runs/s, two replicas", two.get("runs_per_s"), None, unit=" /s"),
        Goal("7", f"{of}, runs/s, one replica", one.get("runs_per_s"), None, unit=" /s"),
        Goal("7", "  two replicas / one", scale.get("ratio"), None),
        Goal("7", f"{of}: calls lost or duplicated at the tool", missed, 0, unit=""),
    ]
    for name, measured in (("two replicas", two), ("one replica", one)):
        rows += [
            Goal("7", f"  run latency p50, {name}", measured.get("p50_ms"), None, unit=" ms"),
            Goal("7", f"  run latency p99, {name}", measured.get("p99_ms"), None, unit=" ms"),
            Goal(
                "7",
                f"  database per run, {name}",
                measured.get("kib_per_run"),
                None,
                unit=" KiB",
            ),
        ]
    return rows


def report(figures: dict[str, Any], console: Console | None = None) -> list[Goal]:
    """Print the goals table; returns its rows."""
    rows = goals(figures)
    table = Table(title="Performance goals (this run; each against its peer in the same run)")
    for column in ("item", "figure", "measured", "goal", "met"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row.shown())
    (console or Console()).print(table)
    return rows
