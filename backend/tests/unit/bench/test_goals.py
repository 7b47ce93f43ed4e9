"""The goals table of ``make bench``: each figure against its bound, missing ones shown so."""

from __future__ import annotations

from bench.goals import goals


def test_each_goal_is_judged_from_the_figures_and_missing_ones_are_not_measured() -> None:
    rows = goals(
        {
            "overhead": {"throughput_ratio": 0.96, "cpu_ratio": 1.3},
            "startup": {"ready_s": 1.5, "idle_mib": 140},
            "durable_postgres": {"idle_cpu_pct": 4.8, "peer_idle_cpu_pct": 4.0},
            "run_store": {"chain": {"ours_us": 60.0, "langgraph_us": 100.0}},
            "openapi_import": {"json_ratio": 2.5, "parse_ratio": 1.3, "ratio": None},
        }
    )
    by_figure = {row.figure.strip(): row for row in rows}
    assert by_figure["POST /workflow throughput / minimal endpoint"].met is True
    assert by_figure["POST /workflow CPU per request / minimal endpoint"].met is False
    assert by_figure["make run: ready"].met is True
    assert by_figure["make run: idle memory"].met is False
    assert by_figure["non-durable run per node / LangGraph"].value == 0.6
    context = by_figure["the same / bare DBOS with 1,000 waiting, PostgreSQL"]
    assert context.value == 1.2 and context.met is None and context.shown()[3] == "-"
    missing = by_figure["durable step / bare DBOS step, SQLite"]
    assert missing.met is None and missing.shown()[2] == "not measured"
    openapi = by_figure["OpenAPI parse + convert (GitHub) / json.loads"]
    assert openapi.met is False and openapi.shown()[3] == "≤ 2x"
    assert by_figure["parse alone / json.loads"].met is None
    peer = next(row for row in rows if row.figure.strip().startswith("OpenAPI import / FastMCP"))
    assert peer.shown()[2] == "not measured"
    assert {row.item for row in rows} == {"1", "2", "3", "4", "5", "6"}
