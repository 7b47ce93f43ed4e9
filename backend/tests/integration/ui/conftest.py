"""Fixtures of the browser tests: the bundle, Chromium, a live server with the travel example,
pages that record console errors, and the artifacts directory for screenshots and timings.

One Chromium serves consecutive browser tests (each test gets its own browser context, so no
cookie, storage or cache crosses tests); it is closed before a test that does not use it, because
the sync Playwright API keeps its event loop marked as running between calls, where an async test
could not start its own. Under pytest-xdist the browser tests are one group (``xdist_group``), so
one worker runs them back to back on one Chromium.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, TEST_API_KEY
from tests.support.browser import ARTIFACTS, launched_browser, require_bundle
from tests.support.fake_llm import FakeLLM
from tests.support.mocked_runs import HOTEL
from tests.support.servers import serve

expect.set_options(timeout=15_000)

SECRET_ENV = "DT_SECRET_UI_TEST_TRAVEL_KEY"
SECRET_VALUE = "ui-secret-7f3a9c2e51"
AUTHED_TOOL = """
name: search_flights_partner
description: Search flights through the partner gateway (authenticated with an API key).
api: {method: GET, base_url: "${PUBLIC_BASE_URL}/demo/travel", path: /flights}
parameters:
  origin: {in: query, required: true, type: string, description: IATA code of departure}
  destination: {in: query, required: true, type: string, description: IATA code of arrival}
  date: {in: query, required: true, type: string, format: date, description: YYYY-MM-DD}
auth: {type: api_key, in: header, name: X-API-Key, secret: "secret:UI_TEST_TRAVEL_KEY"}
"""


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


class _SharedChromium:
    """The Chromium of the current run of consecutive browser tests (none between runs)."""

    def __init__(self) -> None:
        self.stack: ExitStack | None = None
        self.browser: Browser | None = None

    def get(self) -> Browser:
        if self.browser is None or not self.browser.is_connected():
            self.close()
            self.stack = ExitStack()
            self.browser = self.stack.enter_context(launched_browser())  # type: ignore[arg-type]
        return self.browser

    def close(self) -> None:
        stack, self.stack, self.browser = self.stack, None, None
        if stack is not None:
            stack.close()


_CHROMIUM = _SharedChromium()


def _uses_browser(item: pytest.Item | None) -> bool:
    return item is not None and "browser" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests form one xdist group: one worker runs them on one Chromium."""
    here = Path(__file__).parent
    for item in items:
        if _uses_browser(item) and item.path.is_relative_to(here):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """After the test's own teardown, close Chromium unless the next test uses it too."""
    try:
        return (yield)
    finally:
        if not _uses_browser(nextitem):
            _CHROMIUM.close()


@pytest.fixture
def browser() -> Browser:
    """Chromium, shared by consecutive browser tests (see the module's docstring)."""
    require_bundle()
    return _CHROMIUM.get()


@pytest.fixture
def ui_server(
    make_settings: Callable[..., Settings],
    registry_root: Path,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[str]:
    """The app on a free port: travel tools and workflows, the fake LLM, the demo API."""
    shutil.copytree(EXAMPLES / "workflows", registry_root / "workflows")
    (registry_root / "tools" / "search_flights_partner.yaml").write_text(AUTHED_TOOL)
    monkeypatch.setenv(SECRET_ENV, SECRET_VALUE)
    settings = make_settings(openai_base_url=fake_llm.base_url, openai_api_key=TEST_API_KEY)
    with serve(create_app(settings), port=settings.port) as url:
        yield url


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page (1400x900); uncaught page errors fail the test at its end."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    new_page = context.new_page()
    errors: list[str] = []
    new_page.on("pageerror", lambda exc: errors.append(str(exc)))
    new_page.set_default_timeout(15_000)
    yield new_page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def navigation_ms(page: Page) -> dict[str, Any]:
    """The Navigation Timing of the last full load, in milliseconds; ``ready`` is now (call it
    once the page shows what it is for); ``transfer_bytes`` counts what was not cached."""
    value: dict[str, Any] = page.evaluate(
        """() => {
          const n = performance.getEntriesByType('navigation')[0];
          const paint = performance.getEntriesByName('first-contentful-paint')[0];
          const bytes = performance.getEntriesByType('resource')
            .reduce((s, r) => s + (r.transferSize || 0), n.transferSize || 0);
          return {dom_content_loaded: n.domContentLoadedEventEnd, load: n.loadEventEnd,
                  first_contentful_paint: paint ? paint.startTime : null,
                  ready: performance.now(), transfer_bytes: bytes};
        }"""
    )
    return value


def record_timing(artifacts: Path, name: str, timing: dict[str, Any]) -> None:
    """Add one measurement to artifacts/ui/timings.json (reported, never asserted)."""
    path = artifacts / "timings.json"
    with (artifacts / ".timings.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test sessions or workers write it too
        data = json.loads(path.read_text()) if path.exists() else {}
        data[name] = timing
        path.write_text(json.dumps(data, indent=2))


def screenshot(page: Page, path: Path) -> None:
    """A full-page screenshot from the top (the sticky header stays where it belongs)."""
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(path), full_page=True)


BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def _wait_run(url: str, run_id: str, status: str) -> None:
    for _ in range(200):  # 20 s at most
        if httpx.get(f"{url}/runs/{run_id}").json()["status"] == status:
            return
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never reached {status}")


@pytest.fixture
def runs(ui_server: str) -> Iterator[dict[str, str]]:
    """A finished run, a run waiting for approval, and a failed run."""
    done = httpx.post(f"{ui_server}/workflows/book_hotel/runs", json={"params": HOTEL}).json()[
        "run_id"
    ]
    waiting = httpx.post(
        f"{ui_server}/workflows/book_with_approval/runs", json={"params": BOOK}
    ).json()["run_id"]
    fault = {"operation": "create_booking", "fail_next": 50, "status": 404}
    httpx.post(f"{ui_server}/demo/travel/_faults", json=fault)
    failed = httpx.post(f"{ui_server}/workflows/book_flight/runs", json={"params": BOOK}).json()[
        "run_id"
    ]
    _wait_run(ui_server, done, "succeeded")
    _wait_run(ui_server, waiting, "waiting_input")
    _wait_run(ui_server, failed, "failed")
    httpx.delete(f"{ui_server}/demo/travel/_faults")
    yield {"done": done, "waiting": waiting, "failed": failed}
