"""The console driven through its flows at phone size (390x844) and desktop size (1400x900), in
the light and the dark theme: after every step, nothing is wider than the screen and axe-core
finds no violation (WCAG 2.0-2.2 A/AA and its best practices), and a screenshot of the step is
written to test-artifacts/ui/flows/ as ``<size>-<theme>-<step>.png``.

The steps are what a person reaches, not only the pages as they open: a request with its result
and the history select, an error, catalog previews with warnings and conflicts (OpenAPI pasted,
Arazzo uploaded), an open menu, a node panel opened from the keyboard, an approval with a table
wider than a phone (and its scroll cue), a redrive's preview, a tool's form with a parameter row
added, and a refused save with its violation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.integration.ui.layout_checks import (
    BACKGROUNDS,
    PAGES,
    SIZES,
    THEMES,
    layout_problems,
)
from tests.integration.ui.test_catalogs_ui import upload_pet_coupons
from tests.support.fake_llm import FakeLLM, tool_call

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PETSTORE = FIXTURES / "openapi" / "petstore-3.0.json"

LONG_INSTRUCTIONS = (
    "Find every flight from Amsterdam Schiphol to Barcelona El Prat on the first of December "
    "2026, cheapest first, and say which one leaves earliest"
)


def _request_with_history(page: Page, url: str, fake_llm: FakeLLM) -> None:
    """A single-shot request: its stages, then the history select with the long input."""
    fake_llm.script(
        tool_call("search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"})
    )
    page.goto(f"{url}/ui/#/single")
    page.get_by_label("use search_flights", exact=True).check()
    page.get_by_label("Instructions", exact=True).fill(LONG_INSTRUCTIONS)
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_test_id("stage-response")).to_have_attribute("data-stage-status", "ok")
    expect(page.get_by_label("Past inputs")).to_be_visible()


def _catalog_error(page: Page, url: str, _: FakeLLM) -> None:
    """A preview of a document that is not there: the error box with a long path."""
    page.goto(f"{url}/ui/#/catalogs")
    page.get_by_label("Catalog name").fill("missing")
    page.locator("#catalog-source").fill(
        "catalogs/a-folder-with-a-rather-long-name/and-a-document-that-is-not-there/openapi.yaml"
    )
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_test_id("error-box")).to_be_visible()


def _catalog_conflicts(page: Page, url: str, _: FakeLLM) -> None:
    """A pasted document whose tools another catalog already has: the preview's warnings
    (opened) and its conflicts listed, Import disabled with the reason."""
    document = PETSTORE.read_text()
    first = {"content": document, "name": "pets", "overwrite": True}
    assert httpx.post(f"{url}/catalogs", json=first).status_code == 201
    page.goto(f"{url}/ui/#/catalogs")
    form = page.get_by_test_id("catalog-import")
    form.get_by_label("pasted text").check()
    form.get_by_label("Document text").fill(document)
    form.get_by_label("Catalog name").fill("pets-again")
    form.get_by_role("button", name="Preview").click()
    preview = page.get_by_test_id("catalog-preview")
    expect(preview.get_by_test_id("catalog-conflicts")).to_contain_text("name(s) clash")
    preview.get_by_text("warning(s)").click()
    expect(page.get_by_test_id("import-reason")).to_be_visible()


def _arazzo_preview(page: Page, url: str, _: FakeLLM) -> None:
    """An uploaded Arazzo document with its OpenAPI source, previewed leniently: its warnings
    (long lines) open, each workflow listed."""
    form = upload_pet_coupons(page, url)
    form.get_by_label("Lenient Arazzo").check()
    form.get_by_role("button", name="Preview").click()
    preview = page.get_by_test_id("catalog-preview")
    expect(preview.get_by_test_id("arazzo-workflow-report")).to_contain_text("apply-coupon")
    preview.get_by_text("warning(s)").click()


def _node_panel_by_keyboard(page: Page, url: str, _: FakeLLM, run_id: str) -> None:
    """The run view with a node's panel opened by Enter on the focused graph node."""
    page.goto(f"{url}/ui/#/runs/{run_id}")
    node = page.locator("[data-testid=workflow-graph] .react-flow__node").first
    node.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("node-panel")).to_be_visible()


def _approval(page: Page, url: str, _: FakeLLM, run_id: str, phone: bool) -> None:
    """The approval form: on a phone its options table scrolls inside the card, with a cue."""
    page.goto(f"{url}/ui/#/runs/{run_id}")
    picker = page.get_by_test_id("options-selected_flight_id")
    expect(picker.locator("tbody tr").first).to_be_visible()
    if phone:
        expect(picker.get_by_test_id("scroll-cue")).to_be_visible()
        expect(picker.get_by_test_id("scroll-cue")).to_contain_text("scroll sideways")


def _redrive_preview(page: Page, url: str, _: FakeLLM, run_id: str) -> None:
    """A failed run's redrive preview, open."""
    page.goto(f"{url}/ui/#/runs/{run_id}")
    page.get_by_role("button", name="Re-run from the failed node").click()
    expect(page.get_by_role("dialog", name="Re-run from the failed node")).to_be_visible()


def _tool_form(page: Page, url: str, _: FakeLLM) -> None:
    """Edit on the last tool card: the form as rows, a parameter row added."""
    page.goto(f"{url}/ui/#/tools")
    last = page.locator(".tool-card").last
    last.get_by_role("button", name="Edit").click()
    form = page.get_by_test_id("tool-form")
    expect(form).to_be_in_viewport()
    rows = form.locator("[data-testid^='tool-form-parameters-row-']").count()
    form.get_by_test_id("tool-form-parameters-add").click()
    form.get_by_test_id(f"tool-form-parameters-row-{rows}").get_by_label("name").fill("units")


def _tool_refused(page: Page, url: str, _: FakeLLM) -> None:
    """A refused save: the violation at its field and the banner."""
    form = page.get_by_test_id("tool-form")
    page.locator("[id='tool-form-auth.type']").select_option("bearer")
    page.locator("[id='tool-form-auth.secret']").fill("plain-token-value")
    form.get_by_role("button", name="Save tool").click()
    expect(form.get_by_test_id("section-auth").locator(".field-error")).to_be_visible()


def _menu_open(page: Page, url: str, _: FakeLLM) -> None:
    page.goto(f"{url}/ui/#/runs")
    page.get_by_role("button", name="Menu").click()
    expect(page.get_by_role("navigation").get_by_role("link", name="Workflows")).to_be_visible()


@pytest.mark.timeout(600)
def test_every_flow_fits_and_passes_axe_at_both_sizes_in_both_themes(
    browser: Browser, ui_server: str, runs: dict[str, str], fake_llm: FakeLLM, artifacts: Path
) -> None:
    shots = artifacts / "flows"
    shots.mkdir(exist_ok=True)
    problems: list[str] = []
    for size_name, size in SIZES.items():
        phone = size_name == "phone"
        steps: dict[str, Callable[[Page], Any]] = {
            "request-with-history": lambda p: _request_with_history(p, ui_server, fake_llm),
            "catalog-error": lambda p: _catalog_error(p, ui_server, fake_llm),
            "catalog-conflicts": lambda p: _catalog_conflicts(p, ui_server, fake_llm),
            "arazzo-preview": lambda p: _arazzo_preview(p, ui_server, fake_llm),
            "node-panel": lambda p: _node_panel_by_keyboard(p, ui_server, fake_llm, runs["done"]),
            "approval": lambda p, phone=phone: _approval(
                p, ui_server, fake_llm, runs["waiting"], phone
            ),
            "redrive-preview": lambda p: _redrive_preview(p, ui_server, fake_llm, runs["failed"]),
            "tool-form": lambda p: _tool_form(p, ui_server, fake_llm),
            "tool-refused": lambda p: _tool_refused(p, ui_server, fake_llm),
        }
        if phone:
            steps["menu-open"] = lambda p: _menu_open(p, ui_server, fake_llm)
        for theme in THEMES:
            context = browser.new_context(viewport=size, color_scheme=theme)  # type: ignore[arg-type]
            page = context.new_page()
            page.set_default_timeout(15_000)
            try:
                for name, (route, ready) in PAGES.items():
                    page.goto(f"{ui_server}/ui/{route.format(**runs)}")
                    page.locator(ready).first.wait_for()
                    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
                    assert background == BACKGROUNDS[theme], f"{theme} {name}: {background}"
                    problems += layout_problems(page, f"{size_name}-{theme}-{name}", shots)
                for name, step in steps.items():
                    step(page)
                    problems += layout_problems(page, f"{size_name}-{theme}-{name}", shots)
            finally:
                context.close()
    assert not problems, "\n".join(problems)
