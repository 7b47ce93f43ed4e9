"""The console kept open in a real browser: the editor asks before unsaved edits are left (a
link, a typed address, closing the tab) and shows no error while a document loads; `?run=1`
opens the run form of an open page; an ended event log offers no Pause; the tool filter's
"Select shown" selects exactly the tools listed."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Dialog, Page, expect

from tests.integration.ui.test_workflow_editor_ui import replace_text

# Records whether the text ever appears in the page, from now on (every DOM change is seen).
WATCH_TEXT = """(text) => {
  window.__seen = document.body.innerText.includes(text);
  new MutationObserver(() => {
    if (document.body.innerText.includes(text)) window.__seen = true;
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
EMPTY_ERROR = "the document is empty"


def test_no_error_flashes_while_a_document_loads(page: Page, ui_server: str) -> None:
    page.goto(f"{ui_server}/ui/#/workflows")
    expect(page.get_by_test_id("workflow-list")).to_contain_text("book_flight")
    page.evaluate(WATCH_TEXT, EMPTY_ERROR)
    page.get_by_role("link", name="book_flight", exact=True).click()
    status = page.get_by_test_id("validation-status")
    expect(status).to_have_attribute("data-valid", "true")
    # From one workflow to another (the page is made anew for it).
    page.evaluate("location.hash = '#/workflows/book_hotel'")
    expect(page.get_by_test_id("source-view")).to_contain_text("search_hotels")
    expect(status).to_have_attribute("data-valid", "true")
    assert page.evaluate("window.__seen") is False


def test_unsaved_edits_are_kept_unless_the_user_leaves(page: Page, ui_server: str) -> None:
    page.goto(f"{ui_server}/ui/#/workflows/book_hotel")
    status = page.get_by_test_id("validation-status")
    expect(status).to_have_attribute("data-valid", "true")
    page.get_by_role("button", name="Edit", exact=True).click()
    replace_text(page, "first one", "nearest one")
    expect(status).to_contain_text("unsaved changes")
    editor_url = re.compile(r"#/workflows/book_hotel$")

    # A link of the menu: the dialog asks, with Stay focused; Escape stays.
    dialog = page.get_by_test_id("leave-dialog")
    page.get_by_role("navigation").get_by_role("link", name="Tools").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("book_hotel has unsaved changes")
    expect(dialog.get_by_role("button", name="Stay")).to_be_focused()
    expect(page).to_have_url(editor_url)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page).to_have_url(editor_url)
    expect(page.locator(".cm-content")).to_contain_text("nearest one")

    # A typed address: put back, then asked; Stay keeps the edit (at phone size too).
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate("location.hash = '#/runs'")
    expect(dialog).to_be_visible()
    expect(page).to_have_url(editor_url)
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    dialog.get_by_role("button", name="Stay").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".cm-content")).to_contain_text("nearest one")
    page.set_viewport_size({"width": 1400, "height": 900})

    # Closing the tab asks the browser's own question; dismissed, the page stays.
    asked: list[str] = []

    def answer(d: Dialog) -> None:
        asked.append(d.type)
        d.dismiss()

    page.on("dialog", answer)
    page.close(run_before_unload=True)
    deadline = time.monotonic() + 10
    while not asked and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert asked == ["beforeunload"]
    assert not page.is_closed()
    expect(page.locator(".cm-content")).to_contain_text("nearest one")

    # Leave: the page goes where it was asked to, and the edit is dropped.
    page.get_by_role("navigation").get_by_role("link", name="Tools").click()
    dialog.get_by_role("button", name="Leave without saving").click()
    expect(page).to_have_url(re.compile(r"#/tools$"))
    expect(page.get_by_role("heading", name="Tools")).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="Workflows").click()
    expect(page.get_by_test_id("workflow-list")).to_contain_text("book_hotel")  # not asked


def test_run_query_opens_the_form_and_an_ended_log_has_no_pause(page: Page, ui_server: str) -> None:
    page.goto(f"{ui_server}/ui/#/workflows/book_flight")
    start = page.get_by_role("button", name="Start a run…")
    expect(start).to_be_visible()
    form = page.get_by_test_id("run-params")
    expect(form).to_have_count(0)
    # `?run=1` added to the address of the open page opens the form.
    page.evaluate("location.hash = '#/workflows/book_flight?run=1'")
    expect(form).to_be_visible()
    # Hiding it drops `?run=1`, so the run link of the list opens it again.
    page.get_by_role("button", name="Hide run form").click()
    expect(form).to_have_count(0)
    expect(page).to_have_url(re.compile(r"#/workflows/book_flight$"))
    page.evaluate("location.hash = '#/workflows/book_flight?run=1'")
    expect(form).to_be_visible()

    form.get_by_label("origin").fill("AMS")
    form.get_by_label("destination").fill("BCN")
    form.get_by_label("date").fill("2026-12-01")
    form.get_by_label("passenger").fill("Ada Lovelace")
    form.get_by_role("button", name="Start run").click()
    expect(page).to_have_url(re.compile(r"#/runs/[0-9a-f]+$"))
    log = page.get_by_test_id("event-log")
    expect(log).to_contain_text("(ended)")
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    expect(log.get_by_test_id("pause-events")).to_have_count(0)


def test_select_shown_selects_exactly_the_tools_listed(page: Page, ui_server: str) -> None:
    page.goto(f"{ui_server}/ui/#/single")
    picker = page.get_by_test_id("tool-picker")
    expect(picker.get_by_label("use search_flights", exact=True)).to_be_visible()
    page.get_by_label("Filter tools").fill("search_flights")
    # The tool of that name only; the others that match are offered, not listed.
    expect(picker.get_by_role("checkbox")).to_have_count(1)
    expect(picker.get_by_test_id("more-matches")).to_contain_text("more tool(s) match")
    picker.get_by_role("button", name="Select shown (1)").click()
    expect(picker).to_contain_text("1 selected")
    expect(picker.get_by_label("use search_flights", exact=True)).to_be_checked()

    picker.get_by_role("button", name="Show them").click()
    boxes = picker.get_by_role("checkbox")
    shown = boxes.count()
    assert shown > 1
    expect(picker.locator("li[data-match=description]").first).to_contain_text(
        "matched in its description"
    )
    picker.get_by_role("button", name=f"Select shown ({shown})").click()
    expect(picker).to_contain_text(f"{shown} selected")
    for i in range(shown):
        expect(boxes.nth(i)).to_be_checked()
