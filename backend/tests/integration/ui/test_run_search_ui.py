"""The runs page finds runs: a param value typed in the filter bar goes into the URL (a reload,
back and forward keep it), the chart counts the runs by status, and a bulk cancel asks first,
naming how many runs, then reports what it did."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.integration.ui.conftest import screenshot

FLIGHT = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}


def _waiting(url: str, passenger: str) -> str:
    answer = httpx.post(
        f"{url}/workflows/book_with_approval/runs",
        json={"params": {**FLIGHT, "passenger": passenger}},
    )
    run_id: str = answer.json()["run_id"]
    deadline = time.monotonic() + 30
    while httpx.get(f"{url}/runs/{run_id}").json()["status"] != "waiting_input":
        assert time.monotonic() < deadline, run_id
        time.sleep(0.05)
    return run_id


@pytest.mark.timeout(120)
def test_find_a_run_by_a_param_value_and_cancel_in_bulk(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    ada, bob, cy = (_waiting(ui_server, p) for p in ("Ada", "Bob", "Cy"))
    page.goto(f"{ui_server}/ui/#/runs")
    runs = page.get_by_test_id("run-list")
    expect(runs.locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("run-chart-total")).to_have_text("3 runs")
    expect(runs.locator(f"tr[data-run='{bob}']").get_by_test_id("run-trigger")).to_have_text(
        "manual"
    )

    page.get_by_label("Param or output value").fill("passenger=Bob")
    page.get_by_label("Param or output value").press("Enter")
    expect(page).to_have_url(re.compile(r"#/runs\?params\.passenger=Bob$"))
    expect(runs.locator("tbody tr")).to_have_count(1)
    expect(runs.locator(f"tr[data-run='{bob}']")).to_be_visible()
    expect(page.get_by_test_id("run-chart-total")).to_have_text("1 runs")

    page.reload()  # the filter is in the URL
    expect(page.get_by_label("Param or output value")).to_have_value("params.passenger=Bob")
    expect(runs.locator("tbody tr")).to_have_count(1)
    page.go_back()
    expect(runs.locator("tbody tr")).to_have_count(3)
    page.go_forward()
    expect(runs.locator("tbody tr")).to_have_count(1)

    # the selected run, after a confirmation naming how many
    page.get_by_label(f"Select run {bob[:8]}").check()
    page.get_by_role("button", name="Cancel selected (1)").click()
    confirm = page.get_by_test_id("bulk-confirm")
    expect(confirm).to_contain_text("Cancel 1 run?")
    confirm.get_by_role("button", name="Cancel 1 run").click()
    expect(page.get_by_test_id("bulk-report")).to_contain_text("1 cancelled")
    expect(runs.locator(f"tr[data-run='{bob}'] [data-status=cancelled]")).to_be_visible()

    # every run the filters match: counted first, then cancelled (Back changes nothing)
    page.get_by_role("button", name="Clear").click()
    page.get_by_label("Status filter").select_option("waiting_input")
    expect(page).to_have_url(re.compile(r"status=waiting_input"))
    expect(runs.locator("tbody tr")).to_have_count(2)
    page.get_by_role("button", name="Cancel all matching").click()
    expect(confirm).to_contain_text("Cancel 2 runs matching the filters?")
    screenshot(page, artifacts / "runs-bulk-confirm.png")
    confirm.get_by_role("button", name="Back").click()
    expect(confirm).to_have_count(0)
    assert httpx.get(f"{ui_server}/runs/{ada}").json()["status"] == "waiting_input"
    page.get_by_role("button", name="Cancel all matching").click()
    confirm.get_by_role("button", name="Cancel 2 runs").click()
    expect(page.get_by_test_id("bulk-report")).to_contain_text("2 cancelled")
    expect(runs.locator("tbody tr")).to_have_count(0)
    for run_id in (ada, cy):
        assert httpx.get(f"{ui_server}/runs/{run_id}").json()["status"] == "cancelled"
