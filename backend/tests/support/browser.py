"""A real browser for UI tests: Debian's Chromium driven by Python Playwright.

``playwright install`` cannot download browsers here, so the system Chromium is used with the
flags below. A missing Chromium fails the test (it is part of the suite) unless
``DT_NO_BROWSER=1`` says this machine has none, which skips instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[3]
BUNDLE = REPO / "frontend" / "dist"
ARTIFACTS = REPO / "backend" / "test-artifacts" / "ui"  # git-ignored


def chromium_path() -> Path:
    """The Chromium to drive; fails (or skips with DT_NO_BROWSER=1) when there is none."""
    found = CHROMIUM if CHROMIUM.exists() else None
    if found is None and shutil.which("chromium"):
        found = Path(str(shutil.which("chromium")))
    if found is None:
        message = (
            "Chromium is missing: install it with `apt-get install -y chromium` "
            "(or set DT_NO_BROWSER=1 to skip the browser tests on a machine without one)"
        )
        if os.environ.get("DT_NO_BROWSER") == "1":
            pytest.skip(message)
        pytest.fail(message)
    return found


def require_bundle() -> Path:
    """The built UI bundle; fails with how to build it when it is missing."""
    if not (BUNDLE / "index.html").is_file():
        pytest.fail(f"the UI bundle is missing at {BUNDLE}: run `make frontend/dist`")
    return BUNDLE


@contextmanager
def launched_browser() -> Iterator[object]:
    """A headless Chromium, closed at the end of the block."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(executable), args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()
