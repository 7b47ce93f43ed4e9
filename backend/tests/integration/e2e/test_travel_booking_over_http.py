"""End to end over real HTTP: the app served by uvicorn, the real openai client against the
scripted fake LLM, and the pipeline calling the demo travel API mounted in the same server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.demo.travel_data import OPERATIONS
from dynamic_tools.settings import Settings
from tests.conftest import TEST_API_KEY
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.servers import serve

TRAVEL_TOOLS = list(OPERATIONS)


@pytest.fixture
def server(make_settings: Callable[..., Settings], fake_llm: FakeLLM) -> Iterator[str]:
    settings = make_settings(
        openai_base_url=fake_llm.base_url, openai_api_key=TEST_API_KEY, selection_top_k=20
    )
    with serve(create_app(settings), port=settings.port) as url:
        yield url


def workflow(url: str, instructions: str, **extra: Any) -> dict[str, Any]:
    body = {"user_instructions": instructions, "tool_ids": TRAVEL_TOOLS, **extra}
    response = httpx.post(f"{url}/workflow", json=body, timeout=30)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_search_then_book_through_the_demo_api(server: str, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_call(
            "search_flights",
            {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passengers": None},
        )
    )
    found = workflow(server, "Find flights from Amsterdam to Barcelona on 1 December 2026")
    assert found["status"] == "success", found
    flights = found["raw_response"]["body"]
    assert found["raw_response"]["status_code"] == 200 and len(flights) == 3
    assert found["http_spec"]["url"] == f"{server}/demo/travel/flights"

    fake_llm.script(
        tool_call("create_booking", {"flight_id": flights[0]["id"], "passenger": "Ada Lovelace"})
    )
    booked = workflow(server, f"Book flight {flights[0]['id']} for Ada Lovelace")
    assert booked["status"] == "success", booked
    assert booked["selected_tool"] == "create_booking"
    assert booked["raw_response"]["status_code"] == 201
    assert booked["raw_response"]["body"]["status"] == "reserved"
    assert booked["http_spec"]["body"] == {
        "flight_id": flights[0]["id"],
        "passenger": "Ada Lovelace",
    }
    stats = httpx.get(f"{server}/demo/travel/_stats").json()["operations"]
    assert stats["create_booking"]["executed"] == 1
    assert stats["search_flights"]["executed"] == 1


def test_an_api_failure_is_reported_as_the_api_answered(server: str, fake_llm: FakeLLM) -> None:
    httpx.post(
        f"{server}/demo/travel/_faults",
        json={"operation": "search_hotels", "fail_next": 1, "status": 503},
    )
    args = {"city": "Lisbon", "checkin": "2026-12-01", "checkout": "2026-12-03"}
    fake_llm.script(tool_call("search_hotels", args), tool_call("search_hotels", args))
    failed = workflow(server, "Hotels in Lisbon 1-3 December 2026")
    assert failed["status"] == "success"
    assert failed["raw_response"]["status_code"] == 503
    recovered = workflow(server, "Hotels in Lisbon 1-3 December 2026")
    assert recovered["raw_response"]["status_code"] == 200


def test_health_metrics_docs_and_tools(server: str) -> None:
    assert httpx.get(f"{server}/healthz").json()["status"] == "ok"
    ready = httpx.get(f"{server}/readyz").json()
    assert ready["status"] == "ready" and ready["checks"]["registry"]["tools"] == 10
    assert ready["checks"]["database"] == {"ok": True, "backend": "sqlite"}
    assert httpx.get(f"{server}/docs").status_code == 200
    tools = httpx.get(f"{server}/tools").json()
    assert sorted(t["name"] for t in tools["tools"]) == sorted(TRAVEL_TOOLS)
    assert tools["problems"] == []
    metrics = httpx.get(f"{server}/metrics").text
    assert "dynamic_tools_http_requests_total" in metrics


def test_api_token_guards_everything_but_health(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_token="token-abc-123456", enable_demo_api=True)
    with serve(create_app(settings), port=settings.port) as url:
        assert httpx.get(f"{url}/healthz").status_code == 200
        assert httpx.get(f"{url}/demo/travel/_stats").status_code == 401
        denied = httpx.get(f"{url}/tools")
        assert denied.status_code == 401 and denied.json()["error_code"] == "unauthorized"
        assert (
            httpx.get(f"{url}/tools", headers={"Authorization": "Bearer wrong"}).status_code == 401
        )
        ok = httpx.get(f"{url}/tools", headers={"Authorization": "Bearer token-abc-123456"})
        assert ok.status_code == 200
        assert "token-abc-123456" not in ok.text
