"""The phone menu and lists as cards (390x844); the approval answered on a phone. Every page and
flow at both sizes and in both themes is in test_console_flows_ui.py."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, expect

from tests.integration.ui.layout_checks import PHONE


def _open(browser: Browser, size: dict[str, int]) -> Any:
    context = browser.new_context(viewport=size)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(15_000)
    return context, page


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
