"""Cold loads of the web UI in Chromium: bytes transferred and timings per route.

Run: ``cd backend && .venv/bin/python -m bench.ui_load`` (needs ``make frontend/dist`` and
Debian's Chromium, as the browser tests do).

``dynamic-tools serve`` starts with the travel example (as ``make run``) and one finished run.
Each route is opened ``REPEATS`` times in a fresh browser context (an empty cache) and once
more in the same context (a reload: what the immutable caching saves); the peer, measured in
the same run, is the same route with ``Accept-Encoding: identity`` (the bundle and JSON
uncompressed, as they were served before). Printed per route: the bytes transferred cold and
on reload, the ratio against the uncompressed peer, and the medians of DOMContentLoaded,
first contentful paint and "ready" (the route shows what it is for).
"""

from __future__ import annotations

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

REPEATS = 3
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

MEASURE = """() => {
  const n = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const bytes = performance.getEntriesByType('resource')
    .reduce((s, r) => s + (r.transferSize || 0), n.transferSize || 0);
  return {dcl: n.domContentLoadedEventEnd, fcp: paint ? paint.startTime : null,
          ready: performance.now(), bytes: bytes};
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


def _finished_run(url: str) -> str:
    params = {"city": "LIS", "checkin": "2026-12-01", "checkout": "2026-12-03", "guest": "Ada"}
    run_id = str(
        httpx.post(f"{url}/workflows/book_hotel/runs", json={"params": params}).json()["run_id"]
    )
    for _ in range(200):  # 10 s at most
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


def main() -> dict[str, Any]:
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
                        ours = [_load(browser, url, route, False) for _ in range(REPEATS)]
                        peer = _load(browser, url, route, True)
                        figures[name] = {
                            "bytes": statistics.median(o["bytes"] for o in ours),
                            "reload_bytes": statistics.median(o["reload_bytes"] for o in ours),
                            "identity_bytes": peer["bytes"],
                            "dcl_ms": statistics.median(o["dcl"] for o in ours),
                            "fcp_ms": statistics.median(o["fcp"] or 0 for o in ours),
                            "ready_ms": statistics.median(o["ready"] for o in ours),
                            "identity_ready_ms": peer["ready"],
                        }
                finally:
                    browser.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
    _print(figures)
    return figures


def _print(figures: dict[str, Any]) -> None:
    table = Table(title=f"UI cold loads in Chromium (median of {REPEATS}; peer: uncompressed)")
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
        )
    console.print(table)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
