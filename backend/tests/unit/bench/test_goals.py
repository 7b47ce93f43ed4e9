"""The goals table of ``make bench``: each figure against its bound, missing ones shown so."""

from __future__ import annotations

from bench.goals import goals


def test_each_goal_is_judged_from_the_figures_and_missing_ones_are_not_measured() -> None:
    rows = goals(
        {
            "overhead": {"throughput_ratio": 0.96, "cpu_ratio": 1.3, "overhead_ratio": 1.2},
            "startup": {"ready_s": 1.5, "idle_mib": 140},
            "durable_postgres": {"idle_cpu_pct": 4.8, "peer_idle_cpu_pct": 4.0},
            "durable_sqlite": {"remote_resume_ms": 45.0},
            "run_store": {"chain": {"ours_us": 60.0, "langgraph_us": 100.0}},
            "openapi_import": {"json_ratio": 2.5, "parse_ratio": 1.3, "ratio": None},
        }
    )
    by_figure = {row.figure.strip(): row for row in rows}
    assert by_figure["POST /workflow throughput / minimal endpoint"].met is True
    assert by_figure["POST /workflow CPU per request / minimal endpoint"].met is False
    assert by_figure["make run: ready"].met is True
    assert by_figure["make run: idle memory"].met is False
    at_bound = {r.figure.strip(): r for r in goals({"startup": {"idle_mib": 120}})}
    assert at_bound["make run: idle memory"].met is True
    assert at_bound["make run: idle memory"].shown()[3] == "≤ 120 MiB"
    assert by_figure["non-durable run per node / LangGraph"].value == 0.6
    assert by_figure["POST /workflow median latency / minimal endpoint"].met is True
    peer_idle = by_figure["the same / bare DBOS with 1,000 waiting, PostgreSQL"]
    assert peer_idle.value == 1.2 and peer_idle.met is False and peer_idle.shown()[3] == "≤ 1x"
    context = by_figure["1,000 paused runs idle, PostgreSQL"]
    assert context.met is None and context.shown()[3] == "-"
    remote = by_figure["a yield answered through the database, SQLite"]
    assert remote.met is True and remote.shown()[3] == "≤ 100 ms"
    assert by_figure["resume from another replica, PostgreSQL"].met is None
    missing = by_figure["durable step / bare DBOS step, SQLite"]
    assert missing.met is None and missing.shown()[2] == "not measured"
    assert missing.shown()[3] == "≤ 1.1x"  # and ≤ 1.2x on PostgreSQL
    assert by_figure["durable step / bare DBOS step, PostgreSQL"].shown()[3] == "≤ 1.2x"
    openapi = by_figure["OpenAPI parse + convert (GitHub) / json.loads"]
    assert openapi.met is False and openapi.shown()[3] == "≤ 2x"
    assert by_figure["parse alone / json.loads"].met is None
    peer = next(row for row in rows if row.figure.strip().startswith("OpenAPI import / FastMCP"))
    assert peer.shown()[2] == "not measured"
    # the items, and the goals met earlier that must not regress
    assert {row.item for row in rows} == {"1", "2", "3", "4", "5", "6", "7", "kept"}
    assert by_figure["POST /workflow throughput / minimal endpoint"].item == "2"


def test_the_ui_and_run_list_goals_come_from_their_benches() -> None:
    rows = goals(
        {
            "ui_load": {
                "workflow": {"ready_ms": 240.0, "identity_ready_ms": 200.0},
                "run view": {"ready_ms": 450.0, "identity_ready_ms": 500.0},
            },
            "run_search": {
                "runs": 100_000,
                "sqlite": {"status": {"p50": 10.0, "p95": 30.0}, "seed_s": 9.0},
                "postgresql": {"status": {"p50": 90.0, "p95": 250.0}, "text": {"p95": 20.0}},
            },
        }
    )
    by_figure = {row.figure.strip(): row for row in rows}
    assert by_figure["UI workflow page ready, cold"].met is True
    assert by_figure["workflow page ready / uncompressed build"].value == 1.2
    assert by_figure["workflow page ready / uncompressed build"].met is False
    assert by_figure["UI run view (50 nodes) ready, cold"].met is False
    assert by_figure["run view ready / uncompressed build"].value == 0.9
    sqlite = by_figure["run list of 100,000 runs, slowest search p95, SQLite"]
    assert sqlite.value == 30.0 and sqlite.met is True
    postgres = by_figure["run list of 100,000 runs, slowest search p95, PostgreSQL"]
    assert postgres.value == 250.0 and postgres.met is False
    assert goals({})[-1].shown()[2] == "not measured"


def test_the_scale_rows_count_lost_and_duplicated_calls_as_the_goal_and_the_rest_as_context() -> (
    None
):
    measured = {"runs_per_s": 40.0, "p50_ms": 900.0, "p99_ms": 2500.0, "kib_per_run": 15.5}
    scale = {
        "runs": 10_000,
        "two": measured,
        "one": {**measured, "runs_per_s": 25.0},
        "ratio": 1.6,
        "lost": 0,
        "duplicated": 0,
    }
    by_figure = {row.figure.strip(): row for row in goals({"scale": scale})}
    exact = by_figure["10,000 durable runs: calls lost or duplicated at the tool"]
    assert exact.value == 0 and exact.met is True and exact.shown()[3] == "≤ 0"
    two = by_figure["10,000 durable runs, runs/s, two replicas"]
    assert two.value == 40.0 and two.met is None and two.shown()[2] == "40.00 /s"
    assert by_figure["two replicas / one"].value == 1.6
    assert by_figure["run latency p99, one replica"].shown()[2] == "2500.00 ms"
    assert by_figure["database per run, two replicas"].value == 15.5

    duplicated = goals({"scale": {**scale, "runs": 1000, "duplicated": 2}})
    row = next(r for r in duplicated if r.figure.endswith("lost or duplicated at the tool"))
    assert row.figure.startswith("1,000 durable runs") and row.value == 2 and row.met is False
    missing = [row for row in goals({}) if row.item == "7"]
    assert missing and all(row.shown()[2] == "not measured" for row in missing)
