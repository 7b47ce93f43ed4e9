"""Workflows calling the demo travel API over real HTTP through HttpToolRunner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.bootstrap import build_services
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps
from dynamic_tools.execution.tool_runner import HttpToolRunner
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, FIXTURES
from tests.support.plans import DocumentRunner
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
        tools = HttpToolRunner(services.registry, services.invoker)
        events = EventList()
        interpreter = DocumentRunner(
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
        tools = HttpToolRunner(services.registry, services.invoker)
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


class SellOutAfterCheck:
    """The real runner, except that right after check_availability answers, someone else
    books every seat left on the flight (through the demo API): sold between check and book."""

    def __init__(self, inner: HttpToolRunner, url: str) -> None:
        self.inner = inner
        self.url = url

    def knows(self, tool: str) -> bool:
        return self.inner.knows(tool)

    async def call(
        self, tool: str, args: Any, *, idempotency_key: str, timeout_s: float | None
    ) -> Any:
        result = await self.inner.call(
            tool, args, idempotency_key=idempotency_key, timeout_s=timeout_s
        )
        if tool == "check_availability":
            for _ in range(result.body["seats_available"]):
                taken = httpx.post(
                    f"{self.url}/demo/travel/bookings",
                    json={"flight_id": args["flight_id"], "passenger": "Someone Else"},
                )
                assert taken.status_code == 201, taken.text
        return result


async def test_a_flight_sold_between_check_and_booking_is_sold_out_not_retried(
    server: tuple[str, Settings],
) -> None:
    url, settings = server
    services = build_services(settings)
    try:
        tools = SellOutAfterCheck(HttpToolRunner(services.registry, services.invoker), url)
        interpreter = DocumentRunner(
            load_document((EXAMPLES / "workflows" / "travel.yaml").read_text(), name="t").document,
            run_id="run-sold-out",
            tools=tools,
            steps=LocalSteps(),
            events=EventList(),
        )
        outcome = await interpreter.run("book_flight", BOOK)
    finally:
        await services.aclose()
    flight = outcome.nodes["check"].input["flight_id"]
    assert outcome.status == "failed"
    assert outcome.nodes["reserve"].attempts == 1  # a 409 is not retried
    assert outcome.error["message"] == (
        f"Booking flight {flight} failed: create_booking answered HTTP 409 Conflict: "
        f"flight {flight} is sold out (field flight_id)"
    )
    assert "after" not in outcome.error["message"]


async def test_a_booking_that_keeps_failing_says_it_was_retried(
    server: tuple[str, Settings],
) -> None:
    url, settings = server
    httpx.post(
        f"{url}/demo/travel/_faults",
        json={"operation": "create_booking", "fail_next": 3, "status": 503},
    )
    text = (EXAMPLES / "workflows" / "travel.yaml").read_text()
    outcome, _ = await run(settings, text, "book_flight", BOOK)
    assert outcome.status == "failed"
    assert outcome.nodes["reserve"].attempts == 3
    message = outcome.error["message"]
    assert "failed: create_booking failed after 3 attempts: HTTP 503 Service Unavailable" in message
