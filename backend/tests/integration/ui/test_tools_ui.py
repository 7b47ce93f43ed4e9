"""The tools page in a real browser: auth on every card with a warning when its secret is not
set, a tool created, edited and deleted from the form made from the tool config's schema (the
server's violations under their fields, gone once fixed), and a reload of hand-edited files."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

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
