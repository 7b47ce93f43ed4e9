"""The single-shot page in a real browser: the tool picker, the staged result against the
scripted fake LLM and the demo API (secrets masked), errors at their stage, past inputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.integration.ui.conftest import SECRET_VALUE, navigation_ms, record_timing, screenshot
from tests.support.fake_llm import FakeLLM, refusal, text, tool_call
from tests.support.servers import serve

INSTRUCTIONS = "Find flights from AMS to BCN on 2026-12-01 through the partner gateway"


def choose_tools(page: Page, *names: str) -> None:
    for name in names:
        page.get_by_label(f"use {name}", exact=True).check()


def test_submit_and_see_each_stage(
    page: Page, ui_server: str, fake_llm: FakeLLM, artifacts: Path
) -> None:
    page.goto(f"{ui_server}/")
    expect(page).to_have_url(f"{ui_server}/ui/")
    expect(page.get_by_label("use search_flights", exact=True)).to_be_visible()
    record_timing(artifacts, "single_shot_page_cold", navigation_ms(page))
    # What the LLM endpoint can do, and so how a call is asked for (/readyz checks.llm).
    expect(page.get_by_test_id("llm-capabilities")).to_contain_text(
        "asked for a call by required (it can: required, named"
    )
    expect(page.get_by_test_id("llm-capabilities")).to_contain_text("as LLM_CAPABILITIES says")

    # The picker shows each tool's description and, on demand, its parameters.
    picker = page.get_by_test_id("tool-picker")
    page.get_by_label("Filter tools").fill("partner")
    expect(picker).to_contain_text("authenticated with an API key")
    picker.get_by_role("button", name="parameters (3)").click()
    expect(picker).to_contain_text("IATA code of departure")
    choose_tools(page, "search_flights_partner")
    page.get_by_label("Filter tools").fill("")
    choose_tools(page, "search_flights", "create_booking")
    expect(picker).to_contain_text("3 selected")

    fake_llm.script(
        tool_call(
            "search_flights_partner", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        ),
        text("Three flights; the 09:00 Sunline flight is the cheapest."),
    )
    page.get_by_label("Instructions", exact=True).fill(INSTRUCTIONS)
    page.get_by_label("Format the response with the LLM").check()
    page.get_by_label("Formatting instructions").fill("One sentence, cheapest first.")
    page.get_by_role("button", name="Run").click()

    selection = page.get_by_test_id("stage-selection")
    expect(selection).to_have_attribute("data-stage-status", "ok")
    expect(selection).to_contain_text("search_flights_partner")
    expect(selection).to_contain_text('"origin": "AMS"')
    expect(selection.locator(".stage-time")).to_contain_text("ms")

    request = page.get_by_test_id("stage-request")
    expect(request).to_have_attribute("data-stage-status", "ok")
    expect(request).to_contain_text(f"{ui_server}/demo/travel/flights")
    expect(request).to_contain_text('"X-API-Key": "***"')

    response = page.get_by_test_id("stage-response")
    expect(response).to_have_attribute("data-stage-status", "ok")
    expect(response).to_contain_text("HTTP 200")
    expect(response).to_contain_text("FL-AMSBCN-20261201-1")

    formatting = page.get_by_test_id("stage-formatting")
    expect(formatting).to_have_attribute("data-stage-status", "ok")
    expect(formatting).to_contain_text("the 09:00 Sunline flight is the cheapest")
    assert SECRET_VALUE not in page.content()
    screenshot(page, artifacts / "single-shot-stages.png")

    # The LLM was offered the three chosen tools only.
    offered = {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    assert {"search_flights_partner", "search_flights", "create_booking"} <= offered
    assert "book_hotel" not in offered

    # Past inputs come back after a reload.
    page.reload()
    page.get_by_label("Past inputs").select_option(index=1)
    expect(page.get_by_label("Instructions", exact=True)).to_have_value(INSTRUCTIONS)
    expect(page.get_by_test_id("tool-picker")).to_contain_text("3 selected")


def test_a_failing_stage_shows_its_error(
    page: Page, ui_server: str, fake_llm: FakeLLM, artifacts: Path
) -> None:
    page.goto(f"{ui_server}/ui/#/single")
    choose_tools(page, "search_hotels")
    fake_llm.script(refusal("I cannot help with that."))
    page.get_by_label("Instructions", exact=True).fill("Hotels in Lisbon next week")
    page.get_by_role("button", name="Run").click()
    selection = page.get_by_test_id("stage-selection")
    expect(selection).to_have_attribute("data-stage-status", "error")
    expect(selection.locator(".stage-error")).to_contain_text("llm_selection")
    for later in ("stage-request", "stage-response", "stage-formatting"):
        expect(page.get_by_test_id(later)).to_have_attribute(
            "data-stage-status", "skipped" if later == "stage-formatting" else "not reached"
        )
    expect(page.get_by_test_id("stage-panel")).to_contain_text("failed at llm_selection")
    screenshot(page, artifacts / "single-shot-error.png")

    # A body the backend refuses (no tool chosen) is shown with what and where.
    page.get_by_label("use search_hotels", exact=True).uncheck()
    page.get_by_role("button", name="Run").click()
    error = page.get_by_test_id("error-box")
    expect(error).to_contain_text("POST /workflow → 422")
    expect(error).to_contain_text("tool_ids")


def test_no_llm_is_told_up_front_and_refused_input_clears_when_fixed(
    page: Page, make_settings: Callable[..., Settings], artifacts: Path
) -> None:
    settings = make_settings()  # no OPENAI_API_KEY, no OPENAI_BASE_URL
    with serve(create_app(settings), port=settings.port) as url:
        page.goto(f"{url}/ui/")
        notice = page.get_by_test_id("llm-missing")
        expect(notice).to_contain_text("No LLM is configured")
        expect(notice).to_contain_text("OPENAI_API_KEY")
        screenshot(page, artifacts / "single-shot-no-llm.png")

        page.get_by_role("button", name="Run").click()  # nothing written, no tool chosen
        refused = page.locator(".error-box")
        expect(refused).to_contain_text("user_instructions")
        page.get_by_label("Instructions", exact=True).fill("Find flights from AMS to BCN")
        expect(refused).to_have_count(0)  # the field was fixed: its error is gone
