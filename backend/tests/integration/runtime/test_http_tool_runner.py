"""Workflows calling the demo travel API over real HTTP through HttpToolRunner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.bootstrap import build_services, make_secret_lookup
from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps
from dynamic_tools.runtime.tool_runner import HttpToolRunner
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, FIXTURES
from tests.support.servers import serve

BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


@pytest.fixture
def server(make_settings: Callable[..., Settings]) -> Iterator[tuple[str, Settings]]:
    settings = make_settings()
    with serve(create_app(settings), port=settings.port) as url:
        yield url, settings


async def run(
    settings: Settings, text: str, workflow: str, params: dict[str, Any]
) -> tuple[Any, EventList]:
    services = build_services(settings)
    try:
        tools = HttpToolRunner(services.registry, services.sender, make_secret_lookup(settings))
        events = EventList()
        interpreter = Interpreter(
            load_document(text, name="w.yaml").document,
            run_id="run-7",
            tools=tools,
            steps=LocalSteps(),
            events=events,
        )
        return await interpreter.run(workflow, params), events
    finally:
        await services.aclose()


def stats(url: str) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(f"{url}/demo/travel/_stats").json()["operations"]
    return data


async def test_book_flight_retries_with_one_idempotency_key(
    server: tuple[str, Settings],
) -> None:
    url, settings = server
    httpx.post(
        f"{url}/demo/travel/_faults",
        json={"operation": "create_booking", "fail_next": 1, "status": 503},
    )
    text = (EXAMPLES / "workflows" / "travel.yaml").read_text()
    outcome, events = await run(settings, text, "book_flight", BOOK)
    assert outcome.status == "succeeded", outcome.error
    assert outcome.result["status"] == "reserved"
    assert outcome.nodes["reserve"].attempts == 2
    counts = stats(url)["create_booking"]
    assert (counts["calls"], counts["executed"], counts["failed"]) == (2, 1, 1)
    assert [e["status_code"] for e in events.of("attempt_failed")] == [503]
    # Re-running the same run id (what a recovery does) sends the same keys: the API replays.
    again, _ = await run(settings, text, "book_flight", BOOK)
    assert again.result == outcome.result
    counts = stats(url)["create_booking"]
    assert (counts["executed"], counts["replayed"]) == (1, 1)


async def test_rest_call_uses_the_document_base_url(server: tuple[str, Settings]) -> None:
    url, settings = server
    text = (FIXTURES / "workflows" / "engine" / "rest_call.yaml").read_text()
    text = text.replace("BASE_URL", url)
    outcome, _ = await run(settings, text, "search_and_hold", {"date": "2026-12-01"})
    assert outcome.status == "succeeded", outcome.error
    assert outcome.nodes["hold"].output["passenger"] == "Grace Hopper"
    assert outcome.result["flight_id"] == outcome.nodes["search"].output[0]["id"]
    assert stats(url)["create_booking"]["executed"] == 1

    escaped, _ = await run(settings, text, "escape", {})
    assert escaped.status == "failed"
    assert "dot segment" in escaped.error["message"]


async def test_schema_violations_are_refused_before_sending(
    server: tuple[str, Settings],
) -> None:
    url, settings = server
    services = build_services(settings)
    try:
        tools = HttpToolRunner(services.registry, services.sender, make_secret_lookup(settings))
        from dynamic_tools.engine.ports import ToolCallFailed

        with pytest.raises(ToolCallFailed) as info:
            await tools.call(
                "create_booking", {"flight_id": 3}, idempotency_key="k", timeout_s=None
            )
        assert info.value.kind == "refused" and "passenger" in info.value.message
        with pytest.raises(ToolCallFailed) as info:
            await tools.call("no_such_tool", {}, idempotency_key="k", timeout_s=None)
        assert "not registered" in info.value.message
    finally:
        await services.aclose()
    assert stats(url)["create_booking"]["calls"] == 0
