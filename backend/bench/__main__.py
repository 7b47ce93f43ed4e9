"""``make bench``: the full BFCL harness, POST /workflow overhead against a minimal peer, and the
OpenAPI import of GitHub's description against FastMCP's ``from_openapi``, and MCP
``tools/list`` at 1,000 tools and per-call cost against FastMCP, and durable runs per second
with one and two replicas on PostgreSQL, and the run store's cost per event by run size with a
run's cost per node against LangGraph, and a durable step against bare DBOS steps, and a durable
foreach of 1,000 items against the ideal time and LangGraph with its SQLite saver, and the run
search over 100,000 runs on SQLite and PostgreSQL, and the start-up time and idle memory of the
server ``make run`` starts, and the web UI's cold loads in Chromium per route (bytes and timings
against the uncompressed peer), and the Arazzo conformance table (runner fixtures through the
real import and engine), and the scale run: 10,000 durable runs of a 3-call workflow (50 ms
tools) on PostgreSQL with two replicas and with one (runs/s, p50/p99 latency, database size per
run, calls lost or duplicated at the tool)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def bfcl_failures(figures: dict[str, dict[str, Any]]) -> list[str]:
    """Mismatched items and uncaught corruptions, as readable lines."""
    problems: list[str] = []
    for category, data in figures.items():
        problems += [f"{category}: mismatch {item}" for item in data.get("mismatches", [])]
        for name, result in data.get("corruptions", {}).items():
            if result["caught"] != result["total"]:
                problems.append(f"{category}: {name} caught {result['caught']}/{result['total']}")
    return problems


def main() -> int:
    """Run every benchmark and print its figures; exit 1 when a BFCL check fails."""
    from bench.arazzo import main as arazzo_main
    from bench.bfcl.harness import main as bfcl_main
    from bench.goals import report
    from bench.mcp_bench import main as mcp_main
    from bench.openapi_import import main as openapi_import_main
    from bench.overhead import main as overhead_main
    from bench.replicas import main as replicas_main
    from bench.run_search import main as run_search_main
    from bench.run_store import main as run_store_main
    from bench.scale import main as scale_main
    from bench.startup import main as startup_main
    from bench.ui_load import main as ui_load_main

    problems = bfcl_failures(bfcl_main(full=True))
    figures: dict[str, Any] = {"overhead": overhead_main()}
    figures["openapi_import"] = openapi_import_main()
    figures["mcp"] = mcp_main()
    replicas_main()
    figures["scale"] = scale_main()
    figures["run_store"] = run_store_main()
    figures["run_search"] = run_search_main()
    figures["startup"] = startup_main()
    figures["ui_load"] = ui_load_main()
    figures["arazzo"] = arazzo_main()
    # DBOS launches once per process: a process each, handing its figures back in a file.
    runs = {
        "durable_sqlite": ["bench.durable_floor"],
        "durable_postgres": ["bench.durable_floor", "--postgres"],
        "fan_out": ["bench.durable_fan_out"],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for key, command in runs.items():
            out = Path(tmp) / f"{key}.json"
            subprocess.run([sys.executable, "-m", *command, "--json", str(out)], check=False)
            if out.is_file():
                figures[key] = json.loads(out.read_text(encoding="utf-8"))
    report(figures)
    for line in problems:
        print(f"BFCL check failed: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
