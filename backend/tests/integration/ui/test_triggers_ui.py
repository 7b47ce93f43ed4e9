"""A workflow's schedules and webhooks in the UI (#/workflows/<id>/triggers): the next five fire
times as the API gives them, the last ticks of a schedule that fires with links to their runs,
pause and resume, run now linking to its run, a schedule disabled in its document; a webhook's
URL, a signed example computed for a sample body and shown as curl, which — executed as shown —
starts a run whose page names the webhook; a webhook without its secret says so. The same view
at phone width, after using it, is no wider than the screen."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.integration.ui.conftest import screenshot
from tests.integration.ui.layout_checks import PHONE, THEMES, layout_problems
from tests.integration.ui.test_access_ui import sign_in
from tests.support.servers import serve

WORKFLOW = "flight_watch"
HOOK_SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()
TRIP = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
DOCUMENT = f"""\
domain: ui_triggers
workflows:
  {WORKFLOW}:
    description: Look for flights on a schedule or when a partner calls
    params:
      origin: {{type: string, required: true}}
      destination: {{type: string, required: true}}
      date: {{type: string, format: date, required: true}}
    graph:
      search: {{call: search_flights, args: {{origin: $origin, destination: $destination,
               date: $date}}, output: flights}}
    outputs: {{count: $flights.length}}
    triggers:
      - schedule: weekdays
        cron: "30 7 * * 1-5"
        timezone: Europe/Amsterdam
        params: {json.dumps(TRIP)}
      - schedule: heartbeat
        every: 2s
        overlap: skip
        params: {json.dumps(TRIP)}
      - schedule: nightly
        cron: "0 2 * * *"
        enabled: false
        params: {json.dumps(TRIP)}
      - webhook: partner
        secret: secret:UI_PARTNER_HOOK
        params:
          origin: $body.trip.from
          destination: $body.trip.to
          date: $body.trip.date
      - webhook: unset
        secret: secret:UI_HOOK_NOT_SET
        params: {json.dumps(TRIP)}
"""
ADMIN_TOKEN = "ui-triggers-admin-token-93c1d7"
RUN_LINK = re.compile(r"^#/runs/[0-9a-f-]+$")
ORDER = {"trip": {"from": "AMS", "to": "BCN", "date": "2026-12-01"}}


@contextmanager
def _serve(settings: Callable[..., Settings], root: Path, tmp: Path, **extra: Any) -> Iterator[str]:
    """The app with the document above; the partner hook's secret in a secrets directory."""
    (root / "workflows").mkdir(parents=True, exist_ok=True)
    (root / "workflows" / "watch.yaml").write_text(DOCUMENT)
    secrets = tmp / "secrets"
    secrets.mkdir()
    (secrets / "UI_PARTNER_HOOK").write_text(HOOK_SECRET + "\n")
    made = settings(secrets_dir=secrets, schedules_enabled=True, scheduler_poll_s=0.5, **extra)
    with serve(create_app(made), port=made.port) as url:
        yield url


@pytest.fixture
def server(
    make_settings: Callable[..., Settings], registry_root: Path, tmp_path: Path
) -> Iterator[str]:
    """The app without access control."""
    with _serve(make_settings, registry_root, tmp_path) as url:
        yield url


@pytest.fixture
def secured(
    make_settings: Callable[..., Settings], registry_root: Path, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    """The app behind API_TOKEN, and a key that may read and run but not author."""
    with _serve(make_settings, registry_root, tmp_path, api_token=ADMIN_TOKEN) as url:
        made = httpx.post(
            f"{url}/keys",
            json={"name": "ui-runner", "scopes": ["read", "run"]},
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        )
        assert made.status_code == 201, made.text
        yield url, made.json()["key"]


def _triggers(page: Page, url: str) -> None:
    page.goto(f"{url}/ui/#/workflows/{WORKFLOW}/triggers")
    expect(page.get_by_test_id("schedule-weekdays")).to_be_visible()


def _ticks(url: str, name: str, outcome: str) -> list[dict[str, Any]]:
    """The ticks of schedule ``name`` with ``outcome``, as the API lists them."""
    listed = httpx.get(f"{url}/workflows/{WORKFLOW}/schedules").json()["schedules"]
    ticks = next(s for s in listed if s["name"] == name)["last_ticks"]
    return [t for t in ticks if t["outcome"] == outcome]


def _deliver(curl: str) -> dict[str, Any]:
    """The shown curl, executed: by curl itself when there is one, else its parts by httpx."""
    if shutil.which("curl"):
        done = subprocess.run(["sh", "-c", curl], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer
    words = shlex.split(curl.replace("\\\n", " "))
    target = next(w for w in words if w.startswith("http"))
    headers = dict(words[i + 1].split(": ", 1) for i, w in enumerate(words) if w == "-H")
    body = words[words.index("--data-raw") + 1]
    sent = httpx.post(target, content=body, headers=headers)
    assert sent.status_code == 202, sent.text
    return dict(sent.json())


def test_schedules_listed_paused_resumed_and_run_now(
    page: Page, server: str, artifacts: Path
) -> None:
    listed = httpx.get(f"{server}/workflows/{WORKFLOW}/schedules").json()
    expected = next(s for s in listed["schedules"] if s["name"] == "weekdays")["next_fire_times"]

    # from the workflows list, through its badge
    page.goto(f"{server}/ui/#/workflows")
    badge = page.get_by_test_id("trigger-badge")
    expect(badge).to_have_text("3 schedules · 2 webhooks")
    badge.click()
    weekdays = page.get_by_test_id("schedule-weekdays")
    expect(weekdays).to_be_visible()
    expect(weekdays).to_contain_text("cron 30 7 * * 1-5 (Europe/Amsterdam)")

    # the next five fire times, each the API's instant (local text, ISO as tooltip)
    times = weekdays.get_by_test_id("next-fire-times").locator("time")
    expect(times).to_have_count(5)
    assert [times.nth(i).get_attribute("datetime") for i in range(5)] == expected
    assert times.first.get_attribute("title") == expected[0]
    expect(times.first).to_contain_text("in ")

    # a schedule that fires: its ticks, each with its outcome and run
    heartbeat = page.get_by_test_id("schedule-heartbeat")
    deadline = time.monotonic() + 20
    while not _ticks(server, "heartbeat", "started"):
        assert time.monotonic() < deadline, "the heartbeat schedule never started a run"
        time.sleep(0.1)
    page.get_by_role("button", name="Refresh").click()
    started = heartbeat.locator("[data-testid=last-ticks] li[data-outcome=started]")
    expect(started.first.get_by_role("link")).to_have_attribute("href", RUN_LINK)
    expect(started.first.locator("time")).to_have_attribute("datetime", re.compile(r"^2\d{3}-"))
    heartbeat.get_by_role("button", name="Pause").click()  # stop it firing for the rest
    expect(heartbeat).to_have_attribute("data-state", "paused")

    # the document says no: no fire times, and why
    nightly = page.get_by_test_id("schedule-nightly")
    expect(nightly).to_have_attribute("data-state", "disabled")
    expect(nightly.get_by_test_id("disabled-note")).to_contain_text("Disabled in the document")
    expect(nightly.get_by_test_id("next-fire-times-none")).to_be_visible()

    # pause, then resume, by keyboard
    pause = weekdays.get_by_role("button", name="Pause")
    pause.focus()
    page.keyboard.press("Enter")
    expect(weekdays).to_have_attribute("data-state", "paused")
    expect(weekdays.get_by_test_id("paused-by")).to_contain_text("Paused")
    expect(weekdays.get_by_test_id("next-fire-times-none")).to_have_text("none: paused")
    assert httpx.get(f"{server}/workflows/{WORKFLOW}/schedules").json()["schedules"][0]["paused"]
    weekdays.get_by_role("button", name="Resume").click()
    expect(weekdays).to_have_attribute("data-state", "firing")
    expect(weekdays.get_by_test_id("next-fire-times").locator("time")).to_have_count(5)

    # run now (after a confirmation), then its run, which names the schedule
    page.once("dialog", lambda dialog: dialog.accept())
    weekdays.get_by_role("button", name="Run now").click()
    link = weekdays.get_by_test_id("run-now-started").get_by_role("link")
    expect(link).to_be_visible()
    link.click()
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    trigger = page.get_by_test_id("run-trigger")
    expect(trigger).to_contain_text("Started by schedule weekdays")
    expect(trigger.locator("time")).to_have_count(1)
    screenshot(page, artifacts / "desktop-run-started-by-schedule.png")
    trigger.get_by_role("link", name="weekdays").click()
    expect(page.get_by_test_id("schedule-weekdays")).to_be_visible()


def test_webhook_url_signed_example_and_the_run_it_starts(
    page: Page, server: str, artifacts: Path
) -> None:
    _triggers(page, server)
    hook = page.get_by_test_id("webhook-partner")
    expect(hook.get_by_test_id("webhook-url")).to_have_text(f"{server}/hooks/{WORKFLOW}/partner")
    expect(hook.get_by_test_id("secret-set")).to_be_visible()
    expect(hook).to_contain_text("no delivery yet")

    # a body that is not JSON is refused before asking the server
    body = hook.get_by_label("Sample body (JSON)")
    expect(body).to_have_value("{}")
    body.fill("{trip: 1}")
    hook.get_by_role("button", name="Sign an example").click()
    expect(hook.locator(".field-error")).to_contain_text("not JSON")
    body.fill(json.dumps(ORDER, indent=2))
    hook.get_by_role("button", name="Sign an example").click()
    curl = hook.get_by_test_id("webhook-curl")
    expect(curl).to_contain_text("webhook-signature: v1,")
    expect(hook.get_by_test_id("webhook-example")).to_contain_text("5 minutes")
    text = curl.inner_text()
    assert text.startswith("curl ") and f"/hooks/{WORKFLOW}/partner" in text
    screenshot(page, artifacts / "desktop-triggers.png")

    # copying: to the clipboard
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    hook.get_by_role("button", name="Copy curl").click()
    expect(hook.locator(".curl-example [role=status]")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == text

    # the example, executed as shown, starts a run
    accepted = _deliver(text)
    assert accepted["duplicate"] is False and accepted["run_id"]
    page.get_by_role("button", name="Refresh").click()
    delivered = hook.get_by_test_id("last-deliveries").get_by_role("link")
    expect(delivered).to_have_attribute("href", f"#/runs/{accepted['run_id']}")
    delivered.click()
    expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
    expect(page.get_by_test_id("run-trigger")).to_contain_text("Started by webhook partner")
    expect(page.get_by_test_id("run-trigger")).to_have_attribute("data-kind", "webhook")

    # a webhook whose secret the server lacks: listed as such, and the server's 503 shown
    _triggers(page, server)
    unset = page.get_by_test_id("webhook-unset")
    expect(unset.get_by_test_id("secret-missing")).to_be_visible()
    unset.get_by_role("button", name="Sign an example").click()
    error = unset.get_by_test_id("error-box")
    expect(error).to_contain_text("is not set on this server")
    expect(error).to_contain_text("503")


@pytest.mark.parametrize("theme", THEMES)
def test_the_view_fits_a_phone_after_use(
    browser: Browser, server: str, artifacts: Path, theme: str
) -> None:
    """After pausing, running now, signing an example and an error: no page-level overflow and
    no axe violation, in the light and the dark theme."""
    context = browser.new_context(viewport=PHONE, color_scheme=theme)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        _triggers(page, server)
        problems = layout_problems(page, f"phone-{theme}-triggers-open", artifacts)
        weekdays = page.get_by_test_id("schedule-weekdays")
        weekdays.get_by_role("button", name="Pause").click()
        expect(weekdays.get_by_test_id("paused-by")).to_be_visible()
        page.once("dialog", lambda dialog: dialog.accept())
        weekdays.get_by_role("button", name="Run now").click()
        expect(weekdays.get_by_test_id("run-now-started")).to_be_visible()
        hook = page.get_by_test_id("webhook-partner")
        hook.get_by_label("Sample body (JSON)").fill(json.dumps(ORDER))
        hook.get_by_role("button", name="Sign an example").click()
        expect(hook.get_by_test_id("webhook-curl")).to_contain_text("curl")
        unset = page.get_by_test_id("webhook-unset")
        unset.get_by_role("button", name="Sign an example").click()
        expect(unset.get_by_test_id("error-box")).to_be_visible()
        problems += layout_problems(page, f"phone-{theme}-triggers", artifacts)
        assert not problems, "\n".join(problems)
    finally:
        context.close()


def test_a_key_without_author_may_run_now_but_not_pause_or_sign(
    page: Page, secured: tuple[str, str]
) -> None:
    url, key = secured
    page.goto(f"{url}/ui/#/workflows/{WORKFLOW}/triggers")
    sign_in(page, key)
    weekdays = page.get_by_test_id("schedule-weekdays")
    pause = weekdays.get_by_role("button", name="Pause")
    expect(pause).to_have_attribute("aria-disabled", "true")
    expect(pause).to_have_accessible_description(re.compile("needs the 'author' scope"))
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    pause.focus()  # reachable by keyboard, but inert: nothing is sent, nothing changes
    page.keyboard.press("Enter")
    expect(weekdays).to_have_attribute("data-state", "firing")
    assert not [u for u in posted if u.endswith("/pause")], posted
    sign = page.get_by_test_id("webhook-partner").get_by_role("button", name="Sign an example")
    expect(sign).to_have_accessible_description(re.compile("needs the 'author' scope"))

    page.once("dialog", lambda dialog: dialog.accept())
    weekdays.get_by_role("button", name="Run now").click()
    weekdays.get_by_test_id("run-now-started").get_by_role("link").click()
    expect(page.get_by_test_id("run-trigger")).to_contain_text("Started by schedule weekdays")
