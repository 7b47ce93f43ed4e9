"""Signing in to the UI of a server with access control (API_TOKEN and three API keys): the
sign-in form by keyboard and on a phone, a wrong key refused with the server's words, sign-out;
a read-only key sees run and authoring actions disabled with the reason; a read+run key starts a
run, and is signed out with the reason once revoked; a key without ``read`` is told which scope
it lacks; an admin sees whose each run is and filters the list by owner."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.integration.ui.conftest import screenshot
from tests.integration.ui.layout_checks import OVERFLOW, PHONE, SIZES, THEMES, layout_problems
from tests.support.mocked_runs import HOTEL
from tests.support.servers import serve

ADMIN_TOKEN = "ui-access-admin-token-4d9b2e"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
RUN_NEEDED = "needs the 'run' scope (signed in as ui-reader: read)"


@dataclass
class Secured:
    url: str
    reader: dict[str, Any]  # POST /keys answers: key, key_id, principal, name, scopes
    runner: dict[str, Any]
    no_read: dict[str, Any]
    admin_run: str  # a run the admin started


def _wait_run(url: str, run_id: str, status: str) -> dict[str, Any]:
    for _ in range(200):  # 20 s at most
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}", headers=ADMIN).json()
        if run["status"] == status:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never reached {status}")


@pytest.fixture
def secured(make_settings: Callable[..., Settings], registry_root: Path) -> Iterator[Secured]:
    """The app behind API_TOKEN with keys ui-reader (read), ui-runner (read, run) and
    ui-no-read (run), and one finished run the admin started."""
    shutil.copytree(EXAMPLES / "workflows", registry_root / "workflows")
    settings = make_settings(api_token=ADMIN_TOKEN, enable_demo_api=True)
    with serve(create_app(settings), port=settings.port) as url:

        def key(name: str, scopes: list[str]) -> dict[str, Any]:
            made = httpx.post(f"{url}/keys", json={"name": name, "scopes": scopes}, headers=ADMIN)
            assert made.status_code == 201, made.text
            body: dict[str, Any] = made.json()
            return body

        reader, runner = key("ui-reader", ["read"]), key("ui-runner", ["read", "run"])
        no_read = key("ui-no-read", ["run"])
        started = httpx.post(
            f"{url}/workflows/book_hotel/runs", json={"params": HOTEL}, headers=ADMIN
        )
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        _wait_run(url, run_id, "succeeded")
        yield Secured(url, reader, runner, no_read, run_id)


def sign_in(page: Page, key: str) -> None:
    """Sign in from the form, with the keyboard only (the key field has the focus)."""
    field = page.get_by_label("API key")
    expect(field).to_be_focused()
    page.keyboard.type(key)
    page.keyboard.press("Enter")


def expect_owner(page: Page, url: str, run_id: str) -> None:
    """The run page shows the owner the API gives (none while the server gives none)."""
    owner = httpx.get(f"{url}/runs/{run_id}", headers=ADMIN).json().get("owner")
    shown = page.get_by_test_id("run-owner")
    if owner:
        expect(shown).to_contain_text(owner)
    else:
        expect(page.get_by_test_id("run-status")).to_be_visible()
        expect(shown).to_have_count(0)


def test_read_only_key_sees_run_and_authoring_actions_disabled_with_the_reason(
    page: Page, secured: Secured, artifacts: Path
) -> None:
    page.goto(f"{secured.url}/ui/#/workflows/book_hotel?run=1")
    expect(page.get_by_test_id("sign-in")).to_be_visible()
    sign_in(page, secured.reader["key"])
    expect(page.get_by_test_id("who")).to_contain_text("ui-reader")
    expect(page.get_by_test_id("who")).to_contain_text("read")

    # The run form: Start run is disabled, says why (tooltip, description, visible text).
    form = page.get_by_test_id("run-params")
    start = form.get_by_role("button", name="Start run")
    expect(start).to_be_disabled()
    expect(start).to_have_attribute("title", RUN_NEEDED)
    expect(start).to_have_accessible_description(RUN_NEEDED)
    expect(form).to_contain_text(RUN_NEEDED)
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    for name, value in HOTEL.items():
        form.get_by_label(name).fill(value)
    start.focus()
    page.keyboard.press("Enter")  # still reachable by keyboard; nothing is sent
    form.get_by_label("guest").press("Enter")  # nor by submitting the form
    expect(page).to_have_url(re.compile(r"#/workflows/book_hotel\?run=1$"))
    assert not [u for u in posted if "/runs" in u], posted
    screenshot(page, artifacts / "access-read-only-run-form.png")

    # Authoring needs 'author': the editor's Save, New document, the tool buttons.
    save = page.get_by_role("button", name="Save")
    expect(save).to_be_disabled()
    expect(save).to_have_accessible_description(re.compile("needs the 'author' scope"))
    page.goto(f"{secured.url}/ui/#/workflows")
    expect(page.get_by_role("button", name="New document")).to_be_disabled()
    page.goto(f"{secured.url}/ui/#/tools")
    expect(page.get_by_test_id("blocked-note").first).to_contain_text("needs the 'author' scope")
    expect(page.get_by_role("button", name="New tool")).to_be_disabled()
    expect(page.get_by_role("button", name="Reload files")).to_be_disabled()
    expect(page.locator(".tool-card").first.get_by_role("button", name="Delete")).to_be_disabled()
    page.goto(f"{secured.url}/ui/#/single")
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_disabled()

    # Not an admin: no owner filter on the runs list.
    page.goto(f"{secured.url}/ui/#/runs")
    expect(page.get_by_test_id("run-filters")).to_be_visible()
    expect(page.get_by_label("Owner filter")).to_have_count(0)


def test_read_and_run_key_starts_a_run_that_shows_its_owner(page: Page, secured: Secured) -> None:
    page.goto(f"{secured.url}/ui/#/workflows/book_hotel?run=1")
    sign_in(page, secured.runner["key"])
    expect(page.get_by_test_id("who")).to_contain_text("read, run")
    form = page.get_by_test_id("run-params")
    for name, value in HOTEL.items():
        form.get_by_label(name).fill(value)
    start = form.get_by_role("button", name="Start run")
    expect(start).to_be_enabled()
    start.click()
    expect(page).to_have_url(re.compile(r"#/runs/[0-9a-f]+$"))
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")  # events streamed
    expect(page.get_by_test_id("event-log")).to_contain_text("run_succeeded")
    run_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_role("button", name="Re-run", exact=True)).to_be_enabled()
    expect(page.get_by_test_id("run-actions-blocked")).to_have_count(0)
    expect_owner(page, secured.url, run_id)
    # The key stays for this tab: a reload keeps the session.
    page.reload()
    expect(page.get_by_test_id("who")).to_contain_text("ui-runner")
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")

    # The key revoked meanwhile: the next call is refused and the UI asks to sign in, saying why.
    revoked = httpx.delete(f"{secured.url}/keys/{secured.runner['key_id']}", headers=ADMIN)
    assert revoked.status_code == 200, revoked.text
    page.evaluate("location.hash = '#/runs'")  # in-page: the run list is asked for with the key
    expect(page.get_by_test_id("sign-in-error")).to_contain_text("revoked")
    expect(page.get_by_test_id("who")).to_have_count(0)
    assert page.evaluate("sessionStorage.getItem('dt.apiKey')") is None


def test_admin_sees_owners_and_filters_the_runs_by_owner(page: Page, secured: Secured) -> None:
    runner = {"Authorization": f"Bearer {secured.runner['key']}"}
    mine = httpx.post(
        f"{secured.url}/workflows/book_hotel/runs", json={"params": HOTEL}, headers=runner
    )
    assert mine.status_code == 202, mine.text
    _wait_run(secured.url, mine.json()["run_id"], "succeeded")

    page.goto(f"{secured.url}/ui/#/runs/{secured.admin_run}")
    sign_in(page, ADMIN_TOKEN)
    expect(page.get_by_test_id("who")).to_contain_text("API_TOKEN holder")
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    expect_owner(page, secured.url, secured.admin_run)

    page.goto(f"{secured.url}/ui/#/runs")
    owner_filter = page.get_by_label("Owner filter")
    principal = secured.runner["principal"]
    expect(owner_filter.locator(f"option[value='{principal}']")).to_have_text(
        f"ui-runner ({principal})"
    )
    with page.expect_response(lambda r: "/runs?" in r.url and "owner=" in r.url) as answer:
        owner_filter.select_option(principal)
    assert f"owner={principal.replace(':', '%3A')}" in answer.value.url
    # The list shows what the server answers for that owner.
    listed = httpx.get(f"{secured.url}/runs", params={"owner": principal}, headers=ADMIN).json()
    rows = page.locator("[data-testid=run-list] tbody tr")
    expect(rows).to_have_count(len(listed["runs"]))
    shown = rows.evaluate_all("(rows) => rows.map((r) => r.dataset.run)")
    assert shown == [r["run_id"] for r in listed["runs"]]
    owners = {r.get("owner") for r in listed["runs"]}
    if owners != {None}:  # the server names owners: each row shows its own
        for row, run in zip(rows.all(), listed["runs"], strict=True):
            expect(row.get_by_test_id("run-owner")).to_contain_text(run["owner"])


def test_on_a_phone_a_wrong_key_is_refused_then_sign_in_and_out_by_keyboard(
    browser: Browser, secured: Secured, artifacts: Path
) -> None:
    context = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{secured.url}/ui/#/runs")
        expect(page.get_by_test_id("sign-in")).to_be_visible()
        expect(page.get_by_test_id("sign-in-error")).to_have_count(0)  # nothing refused yet
        found = page.evaluate(OVERFLOW)
        assert found["scroll"] <= found["width"], found
        page.keyboard.press("Enter")  # an empty field: said, nothing sent
        expect(page.get_by_test_id("sign-in-error")).to_contain_text("Enter an API key")

        sign_in(page, "dtk_0123456789abcdef_" + "x" * 43)
        refusal = page.get_by_test_id("sign-in-error")
        expect(refusal).to_contain_text("the API key is not valid: unknown, revoked or expired")
        expect(page.get_by_label("API key")).to_have_attribute("aria-invalid", "true")
        screenshot(page, artifacts / "phone-sign-in-refused.png")

        key = page.get_by_label("API key")
        key.fill("")
        key.focus()
        page.keyboard.type(secured.reader["key"])
        page.keyboard.press("Tab")
        expect(page.get_by_role("button", name="Sign in")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("run-list")).to_be_visible()
        assert page.evaluate("sessionStorage.getItem('dt.apiKey')") == secured.reader["key"]
        assert page.evaluate("localStorage.length") == 0

        # Who is signed in, and the sign-out: in the menu on a phone.
        page.get_by_role("button", name="Menu").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("who")).to_contain_text("ui-reader")
        found = page.evaluate(OVERFLOW)
        assert found["scroll"] <= found["width"], found
        page.get_by_role("button", name="Sign out").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("sign-in")).to_be_visible()
        assert page.evaluate("sessionStorage.getItem('dt.apiKey')") is None
        page.reload()  # signed out stays signed out
        expect(page.get_by_test_id("sign-in")).to_be_visible()
    finally:
        context.close()


def test_a_key_without_read_is_told_the_scope_it_lacks(page: Page, secured: Secured) -> None:
    page.goto(f"{secured.url}/ui/")
    sign_in(page, secured.no_read["key"])
    refusal = page.get_by_test_id("sign-in-error")
    expect(refusal).to_contain_text("needs the 'read' scope")
    expect(refusal).to_contain_text("the UI needs a key with the read scope")
    expect(page.get_by_test_id("who")).to_have_count(0)


@pytest.mark.timeout(300)  # eight page loads with axe; past 60 s on a slow 2-core VM under load
def test_sign_in_and_a_read_only_view_pass_axe_at_both_sizes_in_both_themes(
    browser: Browser, secured: Secured, artifacts: Path
) -> None:
    """The sign-in form (refused too) and a read-only key's pages, where actions are disabled
    with their reason: no page-level overflow, no axe violation."""
    problems: list[str] = []
    for size_name, size in SIZES.items():
        for theme in THEMES:
            context = browser.new_context(viewport=size, color_scheme=theme)  # type: ignore[arg-type]
            page = context.new_page()
            page.set_default_timeout(15_000)
            label = f"{size_name}-{theme}"
            try:
                page.goto(f"{secured.url}/ui/#/workflows/book_hotel?run=1")
                expect(page.get_by_test_id("sign-in")).to_be_visible()
                problems += layout_problems(page, f"{label}-sign-in", artifacts)
                sign_in(page, "dtk_0123456789abcdef_" + "x" * 43)
                expect(page.get_by_test_id("sign-in-error")).to_be_visible()
                problems += layout_problems(page, f"{label}-sign-in-refused", artifacts)
                page.get_by_label("API key").fill("")
                sign_in(page, secured.reader["key"])
                expect(page.get_by_test_id("run-params")).to_be_visible()
                problems += layout_problems(page, f"{label}-read-only-run-form", artifacts)
                page.goto(f"{secured.url}/ui/#/tools")
                expect(page.locator(".tool-card").first).to_be_visible()
                problems += layout_problems(page, f"{label}-read-only-tools", artifacts)
            finally:
                context.close()
    assert not problems, "\n".join(problems)
