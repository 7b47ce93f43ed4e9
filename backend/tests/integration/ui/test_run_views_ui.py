"""Runs in a real browser: start book_with_approval from its form, watch the graph change
live, answer the yield, see it complete; a failing run's error summary and retries; the run
list filters; re-run, cancel and export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.integration.ui.conftest import navigation_ms, record_timing, screenshot
from tests.support.documents import rewrite_saved_workflow

FLAKY = """domain: ui_tests
workflows:
  flaky_booking:
    description: "Book with one slow retry (slow for a loaded machine to see it), then fail"
    params: { passenger: { type: str, required: true } }
    graph:
      reserve:
        call: create_booking
        args: { flight_id: FL-AMSBCN-20261201-1, passenger: $passenger }
        on_error: { retry: 1, delay: 8000 }
      recheck:
        depends_on: [reserve]
        call: check_availability
        args: { flight_id: FL-AMSBCN-20261201-1 }
"""


def node(page: Page, node_id: str):  # type: ignore[no-untyped-def]
    return page.get_by_test_id("workflow-graph").get_by_test_id(f"graph-node-{node_id}")


@pytest.mark.timeout(120)
def test_book_with_approval_live_yield_and_completion(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    page.goto(f"{ui_server}/ui/#/workflows/book_with_approval?run=1")
    form = page.get_by_test_id("run-params")
    form.get_by_label("origin").fill("AMS")
    form.get_by_label("destination").fill("BCN")
    form.get_by_label("date").fill("2026-12-01")
    form.get_by_label("passenger").fill("Ada Lovelace")
    page.evaluate("window.__sameDocument = true")
    form.get_by_role("button", name="Start run").click()

    expect(page).to_have_url(re.compile(r"#/runs/[0-9a-f]+$"))
    expect(node(page, "search")).to_have_attribute("data-status", "succeeded")
    expect(node(page, "present_options")).to_have_attribute("data-status", "waiting_input")
    expect(node(page, "book")).to_have_attribute("data-status", "pending")
    expect(page.get_by_test_id("run-status")).to_contain_text("waiting input")
    expect(page.get_by_test_id("legend")).to_contain_text("waiting input")
    yield_form = page.get_by_test_id("yield-form")
    expect(yield_form).to_contain_text("Found 3 flights (FL-AMSBCN-20261201-1 at")
    screenshot(page, artifacts / "run-waiting-for-yield.png")

    # The flights found are offered as a table to pick from (the workflow's `choices`).
    picker = yield_form.get_by_test_id("options-selected_flight_id")
    expect(picker.locator("tbody tr")).to_have_count(3)
    for column in ("option", "id", "airline", "departure_time", "price"):
        expect(picker.locator("thead")).to_contain_text(column)
    yield_form.get_by_role("button", name="Send answer").click()  # nothing picked yet
    expect(yield_form.locator(".field-error")).to_have_text("required")
    picker.locator("tbody tr").nth(1).click()
    expect(yield_form.locator(".field-error")).to_have_count(0)  # fixed: the error is gone
    expect(picker.get_by_role("radio").nth(1)).to_be_checked()
    expect(picker).to_contain_text("chosen: ")
    yield_form.get_by_role("button", name="Send answer").click()
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    for node_id in ("search", "present_options", "book", "pay"):
        expect(node(page, node_id)).to_have_attribute("data-status", "succeeded")
    expect(page.get_by_test_id("yield-form")).to_have_count(0)
    assert page.evaluate("window.__sameDocument") is True  # updated live, never reloaded

    # The side panel of a node: its input and output.
    node(page, "book").click()
    panel = page.get_by_test_id("node-panel")
    expect(panel.get_by_test_id("node-input")).to_contain_text("FL-AMSBCN-20261201-2")
    expect(panel.get_by_test_id("node-output")).to_contain_text('"status": "reserved"')
    # A list of objects (the flights found) is a table, with a JSON toggle.
    node(page, "search").click()
    output = panel.get_by_test_id("node-output")
    expect(output.locator("table.data-table tbody tr")).to_have_count(3)
    expect(output.locator("thead")).to_contain_text("departure_time")
    output.get_by_role("button", name="JSON").click()
    expect(output.locator("pre")).to_contain_text('"airline":')
    expect(output.locator("table")).to_have_count(0)
    output.get_by_role("button", name="table").click()
    expect(output.locator("table.data-table")).to_be_visible()

    # The event history: filter by node and kind; each event opens to its payload.
    log = page.get_by_test_id("event-log")
    expect(log).to_contain_text("waiting_input")
    expect(log).to_contain_text("run_succeeded")
    expect(log).to_contain_text("(ended)")
    log.get_by_label("Node filter").select_option("book")
    expect(log.locator("li.event")).to_have_count(3)  # started, its input, succeeded
    assert set(log.locator("li.event").evaluate_all("(l) => l.map((e) => e.dataset.type)")) <= {
        "node_started",
        "node_input",
        "node_succeeded",
    }
    log.get_by_label("Node filter").select_option("")
    log.get_by_label("Kind filter").select_option("waiting_input")
    waiting = log.locator("li.event")
    expect(waiting).to_have_count(1)
    waiting.get_by_role("button", name=re.compile("show the payload|▸")).click()
    payload = waiting.get_by_test_id("event-payload")
    expect(payload).to_contain_text("message")
    expect(payload).to_contain_text("Which one would you like to book?")
    log.get_by_label("Kind filter").select_option("")
    expect(page.get_by_test_id("timeline")).to_contain_text("present_options")
    screenshot(page, artifacts / "run-succeeded.png")

    stats = httpx.get(f"{ui_server}/demo/travel/_stats").json()["operations"]
    assert stats["create_booking"]["executed"] == 1
    assert stats["process_payment"]["executed"] == 1

    # Load time of the run view with an empty cache (measured, never asserted).
    cold = page.context.browser.new_context(viewport={"width": 1400, "height": 900})  # type: ignore[union-attr]
    fresh = cold.new_page()
    fresh.goto(page.url)
    expect(node(fresh, "pay")).to_have_attribute("data-status", "succeeded")
    record_timing(artifacts, "run_view_page_cold", navigation_ms(fresh))
    cold.close()


@pytest.mark.timeout(120)
def test_failing_run_shows_retries_and_its_error_summary(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    saved = httpx.post(f"{ui_server}/workflows", json={"content": FLAKY, "format": "yaml"})
    assert saved.status_code == 201, saved.text
    fault = {"operation": "create_booking", "fail_next": 10, "status": 503}
    assert httpx.post(f"{ui_server}/demo/travel/_faults", json=fault).status_code == 200
    run = httpx.post(
        f"{ui_server}/workflows/flaky_booking/runs", json={"params": {"passenger": "Ada"}}
    ).json()

    page.goto(f"{ui_server}/ui/#/runs/{run['run_id']}")
    node(page, "reserve").click()
    panel = page.get_by_test_id("node-panel")
    expect(panel.get_by_test_id("next-retry")).to_contain_text("attempt 2 at")
    expect(panel.get_by_test_id("node-attempts")).to_have_text("attempt 1 of 2")
    expect(node(page, "reserve")).to_contain_text("retry 2/2 at")
    # While it waits for its retry, the node shows its input, and the durations keep moving.
    expect(panel.get_by_test_id("node-input")).to_contain_text('"passenger": "Ada"')
    expect(panel.get_by_test_id("node-duration")).to_contain_text("so far")
    before = page.get_by_test_id("run-duration").inner_text()
    expect(page.get_by_test_id("run-duration")).not_to_have_text(before, timeout=3000)
    screenshot(page, artifacts / "run-retry-scheduled.png")

    expect(page.get_by_test_id("run-status")).to_contain_text("failed")
    summary = page.get_by_test_id("error-summary")
    expect(summary).to_contain_text("Run failed at node reserve")
    expect(summary).to_contain_text("HTTP 503")
    # The API's own words, next to its status code, in the summary and the node panel.
    said = "HTTP 503 · injected failure of create_booking"
    expect(summary.get_by_test_id("error-api-said")).to_contain_text(said)
    expect(panel.get_by_test_id("node-api-said")).to_contain_text(said)
    expect(node(page, "recheck")).to_have_attribute("data-status", "not_run")  # never reached
    expect(page.get_by_test_id("legend")).to_contain_text("not run")
    expect(panel.get_by_test_id("node-attempts")).to_have_text("attempt 2 of 2")
    expect(panel.get_by_test_id("next-retry")).to_have_count(0)
    expect(node(page, "reserve")).to_have_attribute("data-status", "failed")
    log = page.get_by_test_id("event-log")
    log.get_by_role("button", name="failed", exact=True).click()
    expect(log.locator("li.event")).to_have_count(4)  # 2 attempt_failed, node_failed, run_failed
    expect(log.locator("li.event[data-type=node_succeeded]")).to_have_count(0)
    screenshot(page, artifacts / "run-failed-error-summary.png")

    with page.expect_download() as download:
        page.get_by_role("button", name="Export JSON").click()
    exported = json.loads(Path(download.value.path()).read_text())
    assert exported["run"]["run_id"] == run["run_id"] and exported["run"]["status"] == "failed"
    assert [e["type"] for e in exported["events"]][-1] == "run_failed"

    # Re-run: a new run with the same params, linked to the original.
    httpx.delete(f"{ui_server}/demo/travel/_faults")
    page.get_by_role("button", name="Re-run", exact=True).click()
    expect(page.get_by_test_id("rerun-of")).to_have_text(run["run_id"][:8])
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    assert run["run_id"] not in page.url

    # The run list filters by status and workflow, with durations.
    page.goto(f"{ui_server}/ui/#/runs?workflow_id=flaky_booking")
    runs = page.get_by_test_id("run-list")
    expect(runs.locator("tbody tr")).to_have_count(2)
    page.get_by_label("Status filter").select_option("failed")
    expect(runs.locator("tbody tr")).to_have_count(1)
    failed_row = runs.locator(f"tr[data-run='{run['run_id']}']")
    expect(failed_row).to_contain_text(" s")
    expect(failed_row.get_by_test_id("run-error")).to_contain_text("reserve HTTP 503 · injected")
    page.get_by_label("Workflow filter").select_option("book_flight")
    expect(page.get_by_text("No runs match")).to_be_visible()
    screenshot(page, artifacts / "runs-list.png")


@pytest.mark.timeout(120)
def test_cancel_a_waiting_run_and_the_parallel_timeline(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    params = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
    waiting = httpx.post(
        f"{ui_server}/workflows/book_with_approval/runs", json={"params": params}
    ).json()
    page.goto(f"{ui_server}/ui/#/runs/{waiting['run_id']}")
    expect(page.get_by_test_id("yield-form")).to_be_visible()
    page.get_by_role("button", name="Cancel run").click()
    expect(page.get_by_test_id("run-status")).to_contain_text("cancelled")
    expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)

    trip = {
        "origin": "AMS",
        "destination": "BCN",
        "checkin": "2026-12-01",
        "checkout": "2026-12-03",
        "passenger": "Ada",
    }
    run = httpx.post(f"{ui_server}/workflows/book_trip/runs", json={"params": trip}).json()
    page.goto(f"{ui_server}/ui/#/runs/{run['run_id']}")
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    timeline = page.get_by_test_id("timeline")
    expect(timeline.locator(".timeline-row")).to_have_count(
        10
    )  # parallel, confirm; the two branches; flight: 4 steps, hotel: 2
    expect(node(page, "flight_and_hotel")).to_contain_text("2/2 branches")
    node(page, "flight_and_hotel").click()
    expect(page.get_by_test_id("node-panel")).to_contain_text("flight/search")
    screenshot(page, artifacts / "run-parallel-timeline.png")


@pytest.mark.timeout(120)
def test_redrive_a_failed_run_from_the_failed_node(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    params = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
    sold_out = {"operation": "create_booking", "fail_next": 1, "status": 409}
    assert httpx.post(f"{ui_server}/demo/travel/_faults", json=sold_out).status_code == 200
    old = httpx.post(f"{ui_server}/workflows/book_flight/runs", json={"params": params}).json()
    page.goto(f"{ui_server}/ui/#/runs/{old['run_id']}")
    expect(page.get_by_test_id("run-status")).to_contain_text("failed")
    searched = httpx.get(f"{ui_server}/demo/travel/_stats").json()["operations"]

    # First a preview: which nodes are reused, which run again and why; Escape starts nothing.
    page.get_by_role("button", name="Re-run from the failed node").click()
    preview = page.get_by_role("dialog", name="Re-run from the failed node")
    expect(preview.get_by_test_id("redrive-reused")).to_contain_text("search")
    expect(preview.get_by_test_id("redrive-reused")).to_contain_text("decide")
    again = preview.get_by_test_id("redrive-runs-again")
    expect(again.locator("li[data-node=reserve]")).to_contain_text("failed in the earlier run")
    expect(preview.get_by_role("button", name="Start")).to_be_focused()  # focus moved in
    page.keyboard.press("Escape")
    expect(preview).to_have_count(0)
    runs = httpx.get(f"{ui_server}/runs", params={"workflow_id": "book_flight"}).json()
    assert runs["total"] == 1  # the preview started nothing

    # The document changes meanwhile: the redrive says so and offers to go on anyway.
    rewrite_saved_workflow(ui_server, "book_flight", "and book a flight", "and book one flight")
    page.get_by_role("button", name="Re-run from the failed node").click()
    expect(page.get_by_test_id("error-box")).to_contain_text("changed since run")
    page.get_by_test_id("redrive-anyway").click()
    expect(preview).to_contain_text("The workflow changed since this run")
    preview.get_by_role("button", name="Start").click()

    expect(page).not_to_have_url(re.compile(old["run_id"]))
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    expect(page.get_by_test_id("redrive-of")).to_have_text(old["run_id"][:8])
    # Reused nodes are marked in the graph, the timeline and the event log.
    expect(page.get_by_test_id("graph-badge-search")).to_have_text("reused")
    expect(page.get_by_test_id("graph-badge-reserve")).to_have_count(0)
    expect(page.get_by_test_id("timeline-reused-search")).to_contain_text(
        f"reused from {old['run_id'][:8]}"
    )
    expect(page.get_by_test_id("timeline-reused-reserve")).to_have_count(0)
    reused_event = page.locator("li.event[data-type=node_succeeded]").filter(has_text="search")
    expect(reused_event.first).to_contain_text(f"reused from run {old['run_id'][:8]}")
    node(page, "search").click()
    expect(page.get_by_test_id("node-reused")).to_contain_text(old["run_id"][:8])
    node(page, "reserve").click()
    expect(page.get_by_test_id("node-reused")).to_have_count(0)  # the failed node ran again
    screenshot(page, artifacts / "run-redriven.png")
    after = httpx.get(f"{ui_server}/demo/travel/_stats").json()["operations"]
    assert after["search_flights"]["calls"] == searched["search_flights"]["calls"]
    assert after["create_booking"]["executed"] == searched["create_booking"]["executed"] + 1


@pytest.mark.timeout(120)
def test_a_new_run_from_this_one_starts_from_its_params_edited(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    params = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
    old = httpx.post(f"{ui_server}/workflows/book_flight/runs", json={"params": params}).json()
    page.goto(f"{ui_server}/ui/#/runs/{old['run_id']}")
    expect(page.get_by_test_id("run-status")).to_contain_text(re.compile("succeeded|failed"))
    page.get_by_test_id("new-run-from-this").click()
    form = page.get_by_test_id("run-params")
    expect(form.locator("#run-params-passenger")).to_have_value("Ada")  # pre-filled
    expect(form.locator("#run-params-date")).to_have_value("2026-12-01")
    form.locator("#run-params-passenger").fill("Grace")

    # As JSON, what the form holds; a bad edit is refused by the server, named per field.
    page.get_by_test_id("params-as-json").click()
    text = page.locator("#run-params-json-text")
    typed = json.loads(text.input_value())
    assert typed == {**params, "passenger": "Grace"}
    text.fill(json.dumps({**typed, "passenger": 5}))
    page.get_by_test_id("run-params-json").get_by_role("button", name="Start run").click()
    violations = page.get_by_test_id("run-params-violations")
    expect(violations).to_contain_text("params.passenger")
    assert httpx.get(f"{ui_server}/runs").json()["total"] == 1  # nothing started
    page.get_by_role("button", name="Form", exact=True).click()
    passenger = form.locator(".field").filter(has=page.locator("#run-params-passenger"))
    expect(passenger.locator(".field-error")).to_be_visible()  # the 422 under its field
    screenshot(page, artifacts / "run-new-from-this-422.png")

    form.locator("#run-params-passenger").fill("Grace")
    form.get_by_role("button", name="Start run").click()
    expect(page).not_to_have_url(re.compile(old["run_id"]))
    expect(page.get_by_test_id("run-status")).to_be_visible()
    new_id = page.url.rsplit("/", 1)[-1]
    run = httpx.get(f"{ui_server}/runs/{new_id}").json()
    assert run["params"] == {**params, "passenger": "Grace"}
