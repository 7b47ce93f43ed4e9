"""Every page at phone size (390x844) and at desktop size (1400x900): no horizontal scrolling
of the page, the navigation reachable, lists as cards; screenshots of each page at both sizes
(the run view, an approval and a failed run among them) in test-artifacts/ui/."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.integration.ui.conftest import screenshot
from tests.support.mocked_runs import HOTEL

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 900}
SIZES = {"phone": PHONE, "desktop": DESKTOP}
BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}

OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => {
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.right <= width + 1) return false;
      for (let p = e.parentElement; p; p = p.parentElement) {  // inside a scrolling box: fine
        const s = getComputedStyle(p);
        if (['auto', 'scroll', 'hidden'].includes(s.overflowX) && p !== document.body
            && p !== document.documentElement) return false;
      }
      return true;
    })
    .slice(0, 5)
    .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} `
                + `right=${Math.round(e.getBoundingClientRect().right)}`);
  return {scroll: document.documentElement.scrollWidth, width, wide};
}"""


def _wait_run(url: str, run_id: str, status: str) -> None:
    for _ in range(200):  # 20 s at most
        if httpx.get(f"{url}/runs/{run_id}").json()["status"] == status:
            return
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never reached {status}")


@pytest.fixture
def runs(ui_server: str) -> Iterator[dict[str, str]]:
    """A finished run, a run waiting for approval, and a failed run."""
    done = httpx.post(f"{ui_server}/workflows/book_hotel/runs", json={"params": HOTEL}).json()[
        "run_id"
    ]
    waiting = httpx.post(
        f"{ui_server}/workflows/book_with_approval/runs", json={"params": BOOK}
    ).json()["run_id"]
    fault = {"operation": "create_booking", "fail_next": 50, "status": 404}
    httpx.post(f"{ui_server}/demo/travel/_faults", json=fault)
    failed = httpx.post(f"{ui_server}/workflows/book_flight/runs", json={"params": BOOK}).json()[
        "run_id"
    ]
    _wait_run(ui_server, done, "succeeded")
    _wait_run(ui_server, waiting, "waiting_input")
    _wait_run(ui_server, failed, "failed")
    httpx.delete(f"{ui_server}/demo/travel/_faults")
    yield {"done": done, "waiting": waiting, "failed": failed}


# page name → (hash route, what shows once it is ready)
PAGES: dict[str, tuple[str, str]] = {
    "single-shot": ("#/single", "[data-testid=tool-picker]"),
    "tools": ("#/tools", ".tool-card"),
    "catalogs": ("#/catalogs", "h1"),
    "workflows": ("#/workflows", "[data-testid=workflow-list]"),
    "workflow": ("#/workflows/book_flight?run=1", "[data-testid=graph-preview] .react-flow__node"),
    "new-workflow": ("#/workflows/_new", ".cm-editor"),
    "runs": ("#/runs", "[data-testid=run-list]"),
    "run-view": ("#/runs/{done}", "[data-testid=workflow-graph] [data-status=succeeded]"),
    "run-approval": ("#/runs/{waiting}", "[data-testid=yield-form] .yield-message"),
    "run-failed": ("#/runs/{failed}", "[data-testid=error-summary]"),
}


def _open(browser: Browser, size: dict[str, int]) -> Any:
    context = browser.new_context(viewport=size)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(15_000)
    return context, page


@pytest.mark.timeout(240)
def test_every_page_fits_a_phone_and_a_desktop(
    browser: Browser, ui_server: str, runs: dict[str, str], artifacts: Path
) -> None:
    problems: list[str] = []
    for size_name, size in SIZES.items():
        context, page = _open(browser, size)
        try:
            for name, (route, ready) in PAGES.items():
                page.goto(f"{ui_server}/ui/{route.format(**runs)}")
                page.locator(ready).first.wait_for()
                found = page.evaluate(OVERFLOW)
                if found["scroll"] > found["width"]:
                    problems.append(f"{size_name} {name}: {found}")
                screenshot(page, artifacts / f"{size_name}-{name}.png")
        finally:
            context.close()
    assert not problems, "pages wider than the screen:\n" + "\n".join(problems)


def test_on_a_phone_the_menu_opens_and_lists_become_cards(
    browser: Browser, ui_server: str, runs: dict[str, str]
) -> None:
    context, page = _open(browser, PHONE)
    try:
        page.goto(f"{ui_server}/ui/#/runs")
        nav = page.get_by_role("navigation")
        expect(nav.get_by_role("link", name="Workflows")).to_be_hidden()
        page.get_by_role("button", name="Menu").click()
        nav.get_by_role("link", name="Workflows").click()
        expect(page.get_by_test_id("workflow-list")).to_be_visible()
        expect(nav.get_by_role("link", name="Runs")).to_be_hidden()  # closed after choosing

        page.get_by_role("button", name="Menu").click()
        nav.get_by_role("link", name="Runs").click()
        row = page.locator(f"[data-testid=run-list] tr[data-run='{runs['failed']}']")
        expect(row).to_be_visible()
        # a card: its cells stacked, each with its column's name, the row as wide as the screen
        cell = row.get_by_test_id("run-error")
        expect(cell).to_contain_text("HTTP 404")
        label = cell.evaluate("(e) => getComputedStyle(e, '::before').content")
        assert "error" in label
        box = row.bounding_box()
        assert box is not None and box["width"] <= PHONE["width"]
        assert page.locator("[data-testid=run-list] thead").is_hidden()

        # The approval is answered on the phone: the options table scrolls inside its card.
        page.goto(f"{ui_server}/ui/#/runs/{runs['waiting']}")
        picker = page.get_by_test_id("options-selected_flight_id")
        picker.locator("tbody tr").nth(0).click()
        page.get_by_role("button", name="Send answer").click()
        expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    finally:
        context.close()
