"""Arazzo conformance: the runner fixtures' cases through the real import and engine, as a table.

Run: ``cd backend && .venv/bin/python -m bench.arazzo`` (also part of ``make bench``).

The same harness as ``tests/conformance`` (``tests/support/arazzo_conformance.py``): each
fixture imported over REST in lenient mode, each case run against a loopback mock server.
Printed: fixture, cases, passed, and for each failure why (the known ones say so, with the
reason documented in docs/arazzo.md), and the time the whole set took.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from dynamic_tools.settings import Settings
from tests.support.arazzo_conformance import KNOWN_FAILURES, CaseResult, run_all
from tests.support.servers import free_port

console = Console(width=160)


def _settings(root: Path) -> Any:
    def make(name: str, hosts: list[str]) -> Settings:
        home = root / name
        (home / "secrets").mkdir(parents=True)
        return Settings(  # type: ignore[call-arg]
            _env_file=None,
            host="127.0.0.1",
            port=free_port(),
            data_dir=home / "data",
            registry_config_path=home / "config.yaml",
            secrets_dir=home / "secrets",
            allowed_target_hosts=hosts,
            openai_api_key=None,
            api_token=None,
            durable_runs=False,
            log_level="WARNING",
        )

    return make


def main() -> dict[str, Any]:
    """Run every case; print the table; the figures by fixture."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        results: list[CaseResult] = asyncio.run(run_all(_settings(Path(tmp))))
        elapsed = time.perf_counter() - started
    table = Table(title="Arazzo conformance (runner fixtures, real import and engine)")
    for column in ("fixture", "cases", "passed", "failures (why)"):
        table.add_column(column, overflow="fold")
    figures: dict[str, Any] = {}
    for fixture in dict.fromkeys(r.fixture for r in results):
        mine = [r for r in results if r.fixture == fixture]
        failed = [r for r in mine if not r.passed]
        why = "; ".join(
            f"{r.case}: "
            + (
                "known — " + KNOWN_FAILURES[(r.fixture, r.case)]
                if (r.fixture, r.case) in KNOWN_FAILURES
                else r.why
            )
            for r in failed
        )
        table.add_row(fixture, str(len(mine)), str(len(mine) - len(failed)), why or "—")
        figures[fixture] = {"cases": len(mine), "passed": len(mine) - len(failed)}
    console.print(table)
    total = sum(f["cases"] for f in figures.values())
    passed = sum(f["passed"] for f in figures.values())
    console.print(
        f"{passed}/{total} cases pass; {total - passed} known failures documented; "
        f"{elapsed:.1f} s for the whole set ({elapsed / max(total, 1) * 1000:.0f} ms a case, "
        "import included)"
    )
    return figures


if __name__ == "__main__":
    main()
