"""The tools page in a real browser: auth on every card with a warning when its secret is not
set, a tool created, edited and deleted from the form made from the tool config's schema (the
server's violations under their fields, gone once fixed), and a reload of hand-edited files;
Edit on the last card brings its form into view, focused, on a phone and a desktop, and the
parameters are edited row by row."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.integration.ui.conftest import SECRET_VALUE, screenshot


def field(page: Page, path: str):  # type: ignore[no-untyped-def]
    """The input of a tool form field by its path (``api.base_url``)."""
    return page.locator(f"[id='tool-form-{path}']")


def test_auth_status_and_tool_crud_from_the_form(
    page: Page, ui_server: str, registry_root: Path, artifacts: Path
) -> None:
    page.goto(f"{ui_server}/ui/#/tools")
    partner = page.get_by_test_id("tool-search_flights_partner").get_by_test_id("tool-auth")
    expect(partner).to_contain_text("api_key in header X-API-Key")
    expect(partner).to_contain_text("secret:UI_TEST_TRAVEL_KEY set ✓")  # the server has it
    expect(page.get_by_test_id("tool-search_flights").get_by_test_id("tool-auth")).to_have_text(
        "auth: none"
    )

    # A new tool from the generated form; the server refuses a secret given as a value.
    page.get_by_role("button", name="New tool").click()
    form = page.get_by_test_id("tool-form")
    field(page, "name").fill("weather_now")
    field(page, "description").fill("Current weather for a city")
    field(page, "api.method").select_option("GET")
    field(page, "api.base_url").fill("https://api.weather.test")
    field(page, "api.path").fill("/now")
    form.get_by_test_id("tool-form-parameters-as-json").click()
    field(page, "parameters").fill('{"city": {"type": "string", "in": "query", "required": true}}')
    auth = form.get_by_test_id("section-auth")
    field(page, "auth.type").select_option("bearer")
    field(page, "auth.secret").fill("plain-token-value")
    form.get_by_role("button", name="Create tool").click()
    error = auth.locator(".field-error")
    expect(error).to_contain_text("must be a tool secret reference like 'secret:NAME'")
    screenshot(page, artifacts / "tool-form-refused.png")
    field(page, "auth.secret").fill("secret:WEATHER_TOKEN")
    expect(error).to_have_count(0)  # fixed: the stale error is gone
    form.get_by_role("button", name="Create tool").click()
    expect(page.get_by_test_id("tools-message")).to_contain_text("Created weather_now")
    card = page.get_by_test_id("tool-weather_now")
    expect(card.get_by_test_id("tool-auth")).to_contain_text(
        "secret:WEATHER_TOKEN is not set: calls will fail until you set the environment "
        "variable DT_SECRET_WEATHER_TOKEN"
    )
    expect(page.get_by_test_id("secrets-missing")).to_contain_text("weather_now")
    on_disk = (registry_root / "tools" / "weather_now.yaml").read_text()
    assert "secret:WEATHER_TOKEN" in on_disk and "plain-token-value" not in on_disk
    assert SECRET_VALUE not in page.content()  # a set secret's value is never shown

    # Edit: the form opens with the tool as saved; the change is written.
    card.get_by_role("button", name="Edit").click()
    form = page.get_by_test_id("tool-form")
    expect(field(page, "name")).to_have_value("weather_now")
    field(page, "description").fill("Weather right now, by city")
    form.get_by_role("button", name="Save tool").click()
    expect(card).to_contain_text("Weather right now, by city")
    assert httpx.get(f"{ui_server}/tools/weather_now").json()["description"] == (
        "Weather right now, by city"
    )

    # Delete asks once more, then removes it.
    card.get_by_role("button", name="Delete", exact=True).click()
    card.get_by_role("button", name="Delete weather_now for good").click()
    expect(card).to_have_count(0)
    assert httpx.get(f"{ui_server}/tools/weather_now").status_code == 404

    # A file written by hand appears after "Reload files".
    (registry_root / "tools" / "by_hand.yaml").write_text(
        "name: by_hand\ndescription: Written by hand\n"
        "api: {method: GET, base_url: 'https://hand.test', path: /x}\n"
    )
    page.get_by_role("button", name="Reload files").click()
    expect(page.get_by_test_id("tools-message")).to_contain_text("Reloaded the tool files")
    expect(page.get_by_test_id("tool-by_hand")).to_contain_text("Written by hand")
    screenshot(page, artifacts / "tools-page.png")


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1400, 900)])
def test_edit_brings_the_form_into_view_and_parameters_are_rows(
    browser: Browser,
    ui_server: str,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    """Edit near the bottom once opened the form thousands of pixels above the viewport."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{ui_server}/ui/#/tools")
        last = page.locator(".tool-card").last
        name = (last.get_attribute("data-testid") or "").removeprefix("tool-")
        assert name
        last.scroll_into_view_if_needed()
        last.get_by_role("button", name="Edit").click()
        expect(field(page, "name")).to_have_value(name)
        expect(field(page, "name")).to_be_focused()
        expect(field(page, "name")).to_be_in_viewport()
        expect(page.get_by_test_id("tool-editor").get_by_role("heading")).to_be_in_viewport()
        screenshot(page, artifacts / f"tool-edit-{width}.png")

        # A parameter added as a row is saved with the tool.
        form = page.get_by_test_id("tool-form")
        rows = form.locator("[data-testid^='tool-form-parameters-row-']")
        before = rows.count()
        form.get_by_test_id("tool-form-parameters-add").click()
        row = form.get_by_test_id(f"tool-form-parameters-row-{before}")
        row.get_by_label("name").fill("units")
        row.get_by_label("in").select_option("query")
        row.get_by_label("parameter units type").select_option("string")
        row.get_by_label("enum (a, b, c)").fill("metric, imperial")
        row.get_by_label("description").fill("Units of the answer")
        row.get_by_label("example").fill("metric")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {width}px"
        screenshot(page, artifacts / f"tool-parameter-rows-{width}.png")
        form.get_by_role("button", name="Save tool").click()
        expect(page.get_by_test_id("tools-message")).to_contain_text(f"Saved {name}")
        saved = httpx.get(f"{ui_server}/tools/{name}").json()["parameters"]["units"]
        assert saved.pop("in", "query") == "query"  # (the default, which the file leaves out)
        assert saved == {
            "type": "string",
            "enum": ["metric", "imperial"],
            "description": "Units of the answer",
            "example": "metric",
        }

        # A refused save: the violation at its field; fixed, it goes, and the banner with it.
        page.get_by_test_id(f"tool-{name}").get_by_role("button", name="Edit").click()
        form = page.get_by_test_id("tool-form")
        field(page, "auth.type").select_option("bearer")
        field(page, "auth.secret").fill("plain-token-value")
        form.get_by_role("button", name="Save tool").click()
        error = form.get_by_test_id("section-auth").locator(".field-error")
        expect(error).to_contain_text("must be a tool secret reference like 'secret:NAME'")
        expect(error).not_to_contain_text("Value error")
        banner = page.get_by_test_id("error-box")
        expect(banner).to_contain_text("Not saved (1 to fix)")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {width}px"
        screenshot(page, artifacts / f"tool-violation-{width}.png")
        field(page, "auth.secret").fill("secret:WEATHER_TOKEN")
        expect(error).to_have_count(0)
        expect(banner).to_have_count(0)
    finally:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"
