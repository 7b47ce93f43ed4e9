"""The run page of a call whose API echoed its credentials shows the answer, masked.

The echo API (``tests/support/echo_api.py``) answers 400 repeating the request's bearer token,
basic credentials and query key, as they came and encoded; the page shows the API's message
and the body as recorded — with ``***`` where the credentials were — and nothing in the page
(its text, its HTML, what it fetched) holds one of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.echo_api import echo_app, echo_registry, leaks
from tests.support.servers import serve


@pytest.fixture
def echo_server(tmp_path: Path, make_settings: Callable[..., Settings]) -> Iterator[str]:
    with serve(echo_app()) as echo:
        root = echo_registry(tmp_path / "echo", echo)
        settings = make_settings(
            registry_config_path=root / "config.yaml",
            secrets_dir=tmp_path / "echo" / "secrets",
            allowed_target_hosts=[echo.removeprefix("http://")],
            enable_demo_api=False,
        )
        with serve(create_app(settings), port=settings.port) as url:
            yield url


def test_the_run_page_shows_the_echoed_answer_masked(page: Page, echo_server: str) -> None:
    started = httpx.post(f"{echo_server}/workflows/echo_flow/runs", json={"params": {}})
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + 30
    while httpx.get(f"{echo_server}/runs/{run_id}").json()["status"] != "failed":
        assert time.monotonic() < deadline, "the run never ended"
        time.sleep(0.1)
    fetched: list[str] = []
    page.on("response", lambda r: fetched.append(r.text()) if "/runs/" in r.url else None)
    page.goto(f"{echo_server}/ui/#/runs/{run_id}")
    expect(page.get_by_text("refused: *** (query )").first).to_be_visible()
    for node in ("key", "basic", "bearer"):
        page.get_by_text(node, exact=True).first.click()
    assert leaks(page.inner_text("body")) == []
    assert leaks(page.content()) == []
    assert fetched and all(leaks(text) == [] for text in fetched)
