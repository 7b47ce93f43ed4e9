"""The workflow editor in a real browser: highlighting, a break shown on its line by the
backend's validator, the graph preview before saving, 422 and 409 on save, reload."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.integration.ui.conftest import screenshot
from tests.support.documents import rewrite_saved_workflow

TOOL_LINE = "call: check_availability"


def editor_code_loaded(page: Page) -> bool:
    """Whether the page has fetched the editor's chunk (CodeMirror)."""
    names: list[str] = page.evaluate(
        "() => performance.getEntriesByType('resource').map((r) => r.name)"
    )
    return any("/assets/YamlEditor-" in name for name in names)


def replace_text(page: Page, old: str, new: str) -> None:
    """Edit like a person: find ``old`` with the editor's search (Ctrl+F), type ``new`` over it."""
    search = page.locator(".cm-search input[name=search]")
    for _ in range(3):  # the shortcut needs the editor focused; retry if the click raced
        page.locator(".cm-content").click()
        page.keyboard.press("Control+Home")
        page.keyboard.press("Control+f")
        try:
            search.wait_for(timeout=3000)
            break
        except PlaywrightTimeout:
            continue
    search.fill("")
    search.press_sequentially(old)
    search.press("Enter")
    search.press("Escape")
    page.keyboard.type(new)


def test_break_a_workflow_and_see_the_error_on_its_line(
    page: Page, ui_server: str, registry_root: Path, artifacts: Path
) -> None:
    assets: dict[str, dict[str, str]] = {}
    page.on(
        "response",
        lambda r: assets.__setitem__(r.url, r.headers) if "/ui/assets/" in r.url else None,
    )
    page.goto(f"{ui_server}/ui/#/workflows")
    expect(page.get_by_test_id("workflow-list")).to_contain_text("book_with_approval")
    # Chromium got the bundle compressed (brotli) and cacheable for good.
    scripts = {u: h for u, h in assets.items() if u.endswith(".js")}
    assert scripts, assets
    for url, headers in scripts.items():
        assert headers.get("content-encoding") == "br", (url, headers)
        assert headers.get("cache-control") == "public, max-age=31536000, immutable", url
    page.get_by_role("link", name="book_flight", exact=True).click()
    status = page.get_by_test_id("validation-status")
    expect(status).to_have_attribute("data-valid", "true")
    preview = page.get_by_test_id("graph-preview")
    expect(preview.get_by_test_id("graph-node-check")).to_contain_text("check_availability")
    # The document is shown as text; the editor's code is fetched only when it opens.
    expect(page.get_by_test_id("source-view")).to_contain_text("call: check_availability")
    assert not editor_code_loaded(page)
    page.get_by_role("button", name="Edit", exact=True).click()
    expect(page.locator(".cm-editor .tok-keyword, .cm-editor [class*='ͼ']").first).to_be_visible()
    assert editor_code_loaded(page)

    replace_text(page, "check_availability", "no_such_tool")
    expect(status).to_have_attribute("data-valid", "false")
    marked = page.locator(".cm-line.dt-error-line")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text("call: no_such_tool")
    text = (registry_root / "workflows" / "travel.yaml").read_text().splitlines()
    expected_line = next(i for i, t in enumerate(text, 1) if TOOL_LINE in t)
    expect(marked).to_have_attribute("data-violation-line", str(expected_line))
    item = page.get_by_test_id("violation-list").locator("li")
    expect(item).to_have_count(1)
    expect(item).to_contain_text(f"line {expected_line}")
    expect(item).to_contain_text("tool 'no_such_tool' is not registered")
    # The preview follows the text before anything is saved.
    expect(preview.get_by_test_id("graph-node-check")).to_contain_text("no_such_tool")
    screenshot(page, artifacts / "editor-error-on-line.png")

    # Saving a broken document is refused with the violations; the file is unchanged.
    page.get_by_role("button", name="Save").click()
    refused = page.get_by_test_id("error-box").filter(has_text="Not saved")
    expect(refused).to_contain_text("PUT /workflows/book_flight → 422")
    expect(refused).to_contain_text("workflows.book_flight.graph.check.call")
    assert "no_such_tool" not in (registry_root / "workflows" / "travel.yaml").read_text()

    page.get_by_role("button", name="Discard edits").click()
    expect(status).to_have_attribute("data-valid", "true")
    expect(page.locator(".cm-line.dt-error-line")).to_have_count(0)


def test_save_and_a_conflicting_save_offers_reload(
    page: Page, ui_server: str, registry_root: Path, artifacts: Path
) -> None:
    page.goto(f"{ui_server}/ui/#/workflows/book_hotel")
    status = page.get_by_test_id("validation-status")
    expect(status).to_have_attribute("data-valid", "true")
    page.get_by_role("button", name="Edit", exact=True).click()
    replace_text(page, "first one", "first hotel")
    expect(status).to_contain_text("unsaved changes")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_test_id("save-message")).to_contain_text("Saved travel.yaml")
    on_disk = (registry_root / "workflows" / "travel.yaml").read_text()
    assert "book the first hotel" in on_disk

    # Someone else saves the document meanwhile.
    rewrite_saved_workflow(
        ui_server, "book_hotel", "book the first hotel", "book the cheapest hotel"
    )

    replace_text(page, "first hotel", "best hotel")
    page.get_by_role("button", name="Save").click()
    conflict = page.get_by_test_id("save-conflict")
    expect(conflict).to_contain_text("the document changed since you opened it")
    expect(conflict).to_contain_text("PUT /workflows/book_hotel → 409")
    screenshot(page, artifacts / "editor-conflict.png")
    assert "book the best hotel" not in (registry_root / "workflows" / "travel.yaml").read_text()

    conflict.get_by_role("button", name="Reload (discard my edits)").click()
    expect(conflict).to_have_count(0)
    expect(page.locator(".cm-content")).to_contain_text("book the cheapest hotel")
    expect(status).to_contain_text("saved")
