"""Cold loads of the web UI in Chromium: bytes transferred and timings per route.

Run: ``cd backend && .venv/bin/python -m bench.ui_load`` (needs ``make frontend/dist`` and
Debian's Chromium, as the browser tests do).

``dynamic-tools serve`` starts with the travel example (as ``make run``), one more workflow
of 50 nodes (``bench_fifty``: ten layers of five searches) and one finished run of it. Each
route is opened ``REPEATS`` times in a fresh browser context (an empty cache) and once more in
the same context (a reload: what the immutable caching saves); the peer, measured in the same
run and interleaved with ours (peer, ours, ours, peer, peer, …: the machine's noise falls on
both, and neither always comes first), is the same route with ``Accept-Encoding: identity``
(the bundle and JSON uncompressed, as they were served before). Printed per route: the bytes
transferred cold and on reload, the ratio against the uncompressed peer, and the medians of
DOMContentLoaded, first contentful paint and "ready": the time, from the navigation's start,
at which the page first shows what it is for, taken in the page by an observer (not by a
round trip from Playwright, which adds its own latency). The goals (docs/performance.md): the
run view and the workflow page ready in ≤ 300 ms cold, and never slower than the
uncompressed peer.

``--waterfall`` prints, per route, the requests of one cold load of ours (start and end, ms).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench.startup import spawn
from tests.support.browser import CHROMIUM, CHROMIUM_FLAGS

REPEATS = 5
GOAL_MS = 300.0
LAYERS, WIDTH = 10, 5  # the 50-node workflow
BUNDLE = Path(__file__).resolve().parents[2] / "frontend" / "dist" / "index.html"
console = Console(width=160)

# route name → (hash route, what shows when it is ready, a click that opens more, if any)
ROUTES: dict[str, tuple[str, str, str | None]] = {
    "single-shot": ("#/", "[data-testid=tool-picker]", None),
    "tools": ("#/tools", "[data-testid=tool-list], .tool-card", None),
    "workflows": ("#/workflows", "[data-testid=workflow-list]", None),
    "workflow": ("#/workflows/book_flight", "[data-testid=graph-preview] .react-flow__node", None),
    "editor opened": ("#/workflows/book_flight", ".cm-editor", "text=Edit"),
    "runs": ("#/runs", "[data-testid=run-list]", None),
    "run view": ("#/runs/{run}", "[data-testid=workflow-graph] [data-status=succeeded]", None),
}

# Records, in the page, when the route's "ready" selector first matches (window.__ready), from
# a MutationObserver set before any script of the page runs.
WATCH = """(selector) => {
  const check = () => {
    if (window.__ready === undefined && document.querySelector(selector)) {
      window.__ready = performance.now();
      observer.disconnect();
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(document, {childList: true, subtree: true, attributes: true});
}"""

MEASURE = """() => {
  const n = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const bytes = performance.getEntriesByType('resource')
    .reduce((s, r) => s + (r.transferSize || 0), n.transferSize || 0);
  const requests = performance.getEntriesByType('resource').map(
    (r) => [r.name, Math.round(r.startTime), Math.round(r.responseEnd)]);
  return {dcl: n.domContentLoadedEventEnd, fcp: paint ? paint.startTime : null,
          ready: window.__ready ?? performance.now(), bytes: bytes, requests: requests};
}"""


def _serve(tmp: str) -> tuple[subprocess.Popen[bytes], str]:
    process, port = spawn(tmp)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    process.terminate()
    raise RuntimeError("the server did not get ready in 60 s")


def _fifty() -> str:
    """A workflow document of 50 call nodes: ``LAYERS`` layers of ``WIDTH``, each on the last."""
    lines = [
        "domain: bench",
        'version: "1.0"',
        "workflows:",
        "  bench_fifty:",
        '    description: "50 searches, ten layers of five (the UI bench\'s run)"',
        "    params:",
        "      city: { type: str, required: true }",
        "      checkin: { type: str, required: true, format: date }",
        "      checkout: { type: str, required: true, format: date }",
        "    graph:",
    ]
    for layer in range(LAYERS):
        for column in range(WIDTH):
            lines += [
                f"      s{layer}_{column}:",
                "        call: search_hotels",
                "        args: { city: $city, checkin: $checkin, checkout: $checkout }",
            ]
            if layer:
                needs = ", ".join(f"s{layer - 1}_{c}" for c in range(WIDTH))
                lines.append(f"        depends_on: [{needs}]")
    return "\n".join(lines) + "\n"


def _finished_run(url: str) -> str:
    """A succeeded run of the 50-node workflow (saved first)."""
    saved = httpx.post(
        f"{url}/workflows",
        json={"content": _fifty(), "format": "yaml", "file": "bench_fifty.yaml"},
        timeout=30,
    )
    saved.raise_for_status()
    params = {"city": "LIS", "checkin": "2026-12-01", "checkout": "2026-12-03"}
    run_id = str(
        httpx.post(f"{url}/workflows/bench_fifty/runs", json={"params": params}).json()["run_id"]
    )
    for _ in range(600):  # 30 s at most
        if httpx.get(f"{url}/runs/{run_id}").json()["status"] == "succeeded":
            return run_id
        time.sleep(0.05)
    raise RuntimeError("the bench's run did not finish")


def _load(browser: Any, url: str, route: tuple[str, str, str | None], identity: bool) -> Any:
    """One cold load (and, for the compressed case, a reload with the cache it filled)."""
    path, ready, click = route
    headers = {"Accept-Encoding": "identity"} if identity else {}
    context = browser.new_context(
        viewport={"width": 1400, "height": 900}, extra_http_headers=headers
    )
    try:
        page = context.new_page()
        page.add_init_script(f"({WATCH})({json.dumps(ready)})")
        page.goto(f"{url}/ui/{path}")
        if click:
            page.locator(click).first.click()
        page.locator(ready).first.wait_for(timeout=20_000)
        cold = page.evaluate(MEASURE)
        page.reload()
        if click:
            page.locator(click).first.click()
        page.locator(ready).first.wait_for(timeout=20_000)
        cold["reload_bytes"] = page.evaluate(MEASURE)["bytes"]
        return cold
    finally:
        context.close()


def _waterfall(name: str, load: dict[str, Any]) -> None:
    """One cold load's requests: start and end in ms from the navigation's start."""
    console.print(
        f"[bold]{name}[/bold]: DOMContentLoaded {load['dcl']:.0f} ms, ready {load['ready']:.0f} ms"
    )
    for request, start, end in sorted(load["requests"], key=lambda r: r[1]):
        console.print(f"  {start:5d} → {end:5d} ms  {request.split('127.0.0.1')[-1]}")


def main(waterfall: bool = False) -> dict[str, Any]:
    """Measure every route; print the table; return the figures (empty when not possible)."""
    if not BUNDLE.is_file() or not CHROMIUM.exists():
        console.print("UI load: skipped (needs `make frontend/dist` and Chromium)")
        return {}
    from playwright.sync_api import sync_playwright

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        process, url = _serve(tmp)
        try:
            run_id = _finished_run(url)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS
                )
                try:
                    for name, (path, ready, click) in ROUTES.items():
                        route = (path.replace("{run}", run_id), ready, click)
                        ours, peer = [], []
                        for repeat in range(REPEATS):  # interleaved, each first in turn
                            for identity in (False, True) if repeat % 2 else (True, False):
                                (peer if identity else ours).append(
                                    _load(browser, url, route, identity)
                                )
                        if waterfall:
                            _waterfall(name, ours[len(ours) // 2])
                        figures[name] = {
                            "bytes": statistics.median(o["bytes"] for o in ours),
                            "reload_bytes": statistics.median(o["reload_bytes"] for o in ours),
                            "identity_bytes": statistics.median(p["bytes"] for p in peer),
                            "dcl_ms": statistics.median(o["dcl"] for o in ours),
                            "fcp_ms": statistics.median(o["fcp"] or 0 for o in ours),
                            "ready_ms": statistics.median(o["ready"] for o in ours),
                            "identity_ready_ms": statistics.median(p["ready"] for p in peer),
                        }
                finally:
                    browser.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
    _print(figures)
    return figures


def _print(figures: dict[str, Any]) -> None:
    table = Table(
        title=f"UI cold loads in Chromium (median of {REPEATS}; peer: uncompressed, interleaved;"
        f" goal for the workflow page and the run view: ready ≤ {GOAL_MS:g} ms)"
    )
    for column in (
        "route",
        "KiB cold",
        "KiB reload",
        "KiB uncompressed",
        "ratio",
        "DOMContentLoaded",
        "first paint",
        "ready",
        "ready uncompressed",
        "ready ratio",
    ):
        table.add_column(column, justify="left" if column == "route" else "right")
    for name, f in figures.items():
        table.add_row(
            name,
            f"{f['bytes'] / 1024:.0f}",
            f"{f['reload_bytes'] / 1024:.1f}",
            f"{f['identity_bytes'] / 1024:.0f}",
            f"{f['bytes'] / f['identity_bytes']:.2f}x" if f["identity_bytes"] else "-",
            f"{f['dcl_ms']:.0f} ms",
            f"{f['fcp_ms']:.0f} ms",
            f"{f['ready_ms']:.0f} ms",
            f"{f['identity_ready_ms']:.0f} ms",
            f"{f['ready_ms'] / f['identity_ready_ms']:.2f}x",
        )
    console.print(table)


if __name__ == "__main__":
    sys.exit(0 if main(waterfall="--waterfall" in sys.argv) else 1)
