"""Arazzo conformance: the runner fixtures' cases through the real import and engine, as a table.

Run: ``cd backend && .venv/bin/python -m bench.arazzo`` (also part of ``make bench``).

The same harness as ``tests/conformance`` (``tests/support/arazzo_conformance.py``): each
fixture imported over REST in lenient mode, each case run against a loopback mock server. The
peers, measured in the same run on the same mock server and cases: Jentic's ``arazzo-runner``
(``bench/arazzo_peer.py``), the runner the first fixtures come from, and Redocly's Respect
(``bench/arazzo_respect.py``; judged by success and API calls, its log having no outputs).
Printed per fixture: cases, passed (ours, each peer's), the median time of a case (ours
includes the REST round trips and the run's bookkeeping), and for each of our failures why
(the known ones say so, with the reason documented in docs/arazzo.md).
"""

from __future__ import annotations

import asyncio
import logging
import re
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.arazzo_peer import run_peer
from bench.arazzo_respect import run_respect
from dynamic_tools.settings import Settings
from tests.support.arazzo_conformance import KNOWN_FAILURES, CaseResult, mock_server, run_all
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
    """Run every case, ours then the peer's; print the table; the figures by fixture."""
    with tempfile.TemporaryDirectory() as tmp:
        results: list[CaseResult] = asyncio.run(run_all(_settings(Path(tmp))))
    with mock_server() as (mock, url):
        ran = run_peer(mock, url)
    peer_missing = ran if isinstance(ran, str) else None
    peer = [] if isinstance(ran, str) else ran
    with mock_server() as (mock, url):
        respect = run_respect(mock, url)
    respect_missing = respect if isinstance(respect, str) else None
    respected = [] if isinstance(respect, str) else respect
    table = Table(
        title="Arazzo conformance: runner fixtures, ours (import + engine) vs arazzo-runner "
        "and Redocly Respect"
    )
    for column in (
        "fixture",
        "cases",
        "ours passed",
        "arazzo-runner passed",
        "Respect passed*",
        "ms a case (ours / runner / Respect)",
        "our failures (why)",
    ):
        table.add_column(column, overflow="fold")
    figures: dict[str, Any] = {}
    for fixture in dict.fromkeys(r.fixture for r in results):
        mine = [r for r in results if r.fixture == fixture]
        theirs = [r for r in peer if r.fixture == fixture]
        redocly = [r for r in respected if r.fixture == fixture]
        failed = [r for r in mine if not r.passed]
        reasons = Counter(_why(r) for r in failed)
        why = "; ".join(f"{n} x {reason}" for reason, n in reasons.items())
        ours_ms, peer_ms, respect_ms = (_median_ms(r) for r in (mine, theirs, redocly))
        table.add_row(
            fixture,
            str(len(mine)),
            str(len(mine) - len(failed)),
            "—" if peer_missing else str(sum(r.passed for r in theirs)),
            "—" if respect_missing else str(sum(r.passed for r in redocly)),
            " / ".join(
                [
                    f"{ours_ms:.0f}",
                    "—" if peer_missing else f"{peer_ms:.0f}",
                    "—" if respect_missing else f"{respect_ms:.0f}",
                ]
            ),
            why or "—",
        )
        figures[fixture] = {
            "cases": len(mine),
            "passed": len(mine) - len(failed),
            "peer_passed": None if peer_missing else sum(r.passed for r in theirs),
            "respect_passed": None if respect_missing else sum(r.passed for r in redocly),
            "ms_per_case": round(ours_ms, 1),
            "peer_ms_per_case": round(peer_ms, 1),
            "respect_ms_per_case": round(respect_ms, 1),
        }
    console.print(table)
    total = sum(f["cases"] for f in figures.values())
    passed = sum(f["passed"] for f in figures.values())
    peer_passed = sum(r.passed for r in peer)
    respect_passed = sum(r.passed for r in respected)
    console.print(
        f"ours {passed}/{total} ({total - passed} known failures, documented); arazzo-runner "
        + (f"not run: {peer_missing}" if peer_missing else f"{peer_passed}/{total}")
        + "; Respect "
        + (f"not run: {respect_missing}" if respect_missing else f"{respect_passed}/{total}")
        + " — on the same mock server. Ours runs each case through REST, the engine and real "
        "HTTP (a durable run in production); arazzo-runner in memory; Respect as one "
        "`redocly respect` process a case (node's start included)."
    )
    console.print(
        "* Respect's JSON log has no workflow or step outputs: it is judged by success and API "
        "calls only; its own checks of responses against the OpenAPI description are off."
    )
    for name, found in (("arazzo-runner", peer), ("Respect", respected)):
        for result in found:
            if not result.passed:
                console.print(f"  {name} {result.fixture}/{result.case}: {result.why[:200]}")
    return figures


def _median_ms(results: list[CaseResult]) -> float:
    return statistics.median(r.seconds for r in results) * 1000 if results else 0.0


def _why(result: CaseResult) -> str:
    """Why a case of ours failed, short: a known one's reason up to its first comma or colon."""
    known = KNOWN_FAILURES.get((result.fixture, result.case))
    if known is None:
        return result.why[:200]
    short = re.split(r"[,:;(]", known.reason, maxsplit=1)[0].strip()
    return f"known — {short[:90]}"


if __name__ == "__main__":
    logging.getLogger("arazzo-runner").setLevel(logging.WARNING)
    main()
