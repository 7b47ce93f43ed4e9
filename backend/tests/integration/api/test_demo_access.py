"""The demo API is safe by default: behind the access control, and its controls loopback-only.

Before, with ``API_TOKEN`` set, ``/demo/travel/*`` took unauthenticated writes (``_faults``,
``_reset``, bookings, payments) and the demo was on by default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
import yaml

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mocked_runs import start, wait_for

TOKEN = "demo-token-5e81c2"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DEMO = "/demo/travel"
BOOKING = {"flight_id": "FL-AMSBCN-20261201-1", "passenger": "Ada Lovelace"}
WRITES: list[tuple[str, str, Any]] = [
    ("POST", "/_faults", {"operation": "search_flights", "fail_next": 1}),
    ("DELETE", "/_faults", None),
    ("POST", "/_reset", None),
    ("POST", "/bookings", BOOKING),
    ("POST", "/payments", {"booking_id": "BK-000001", "amount": 1}),
]


def client_at(settings: Settings, host: str, **headers: str) -> httpx.AsyncClient:
    """A client of the app whose requests come from ``host`` (the demo routes need no start)."""
    transport = httpx.ASGITransport(app=create_app(settings), client=(host, 40123))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=headers)


async def test_with_an_api_token_the_demo_is_off_unless_asked_for(
    make_settings: Callable[..., Settings],
) -> None:
    async with client_at(make_settings(api_token=TOKEN), "127.0.0.1") as client:
        for method, path, body in WRITES:
            assert (await client.request(method, DEMO + path, json=body)).status_code == 401
            answer = await client.request(method, DEMO + path, json=body, headers=AUTH)
            assert answer.status_code == 404, (path, answer.text)


async def test_asked_for_behind_a_token_every_demo_route_needs_it(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_token=TOKEN, enable_demo_api=True)
    async with client_at(settings, "127.0.0.1") as client:
        for method, path, body in WRITES:
            refused = await client.request(method, DEMO + path, json=body)
            assert refused.status_code == 401, (path, refused.text)
            assert refused.json()["error_code"] == "unauthorized"
        stats = (await client.get(f"{DEMO}/_stats", headers=AUTH)).json()
        assert stats["faults"] == {} and stats["operations"]["create_booking"]["executed"] == 0
        booked = await client.post(f"{DEMO}/bookings", json=BOOKING, headers=AUTH)
        assert booked.status_code == 201, booked.text
        document = (await client.get("/openapi.json", headers=AUTH)).json()
        assert document["paths"][f"{DEMO}/bookings"]["post"]["security"] == [{"apiToken": []}]


@pytest.mark.parametrize("token", [None, TOKEN])
async def test_the_demo_controls_answer_loopback_callers_only(
    make_settings: Callable[..., Settings], token: str | None
) -> None:
    settings = make_settings(api_token=token, enable_demo_api=True)
    headers = AUTH if token else {}
    async with client_at(settings, "203.0.113.7", **headers) as outside:
        for method, path, body in WRITES[:3]:
            refused = await outside.request(method, DEMO + path, json=body)
            assert refused.status_code == 403, (path, refused.text)
            assert refused.json()["error"]["code"] == "forbidden"
            assert "loopback" in refused.json()["error"]["message"]
        assert (await outside.get(f"{DEMO}/_stats")).json()["faults"] == {}
        booked = await outside.post(f"{DEMO}/bookings", json=BOOKING)
        assert booked.status_code == 201  # the operations are the demo, open to any caller
    for host in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        async with client_at(settings, host, **headers) as local:
            armed = await local.post(f"{DEMO}/_faults", json=WRITES[0][2])
            assert armed.status_code == 200, (host, armed.text)
            assert (await local.post(f"{DEMO}/_reset")).status_code == 200


async def test_behind_the_token_the_travel_tools_still_reach_the_demo_in_process(
    make_settings: Callable[..., Settings],
) -> None:
    """The travel example's base URL is this server: its calls carry no token, and nothing
    listens on the settings' port here — they are answered in-process, on the same state."""
    settings = make_settings(api_token=TOKEN, enable_demo_api=True)
    document = {
        "domain": "demo_access",
        "workflows": {
            "book": {
                "graph": {
                    "reserve": {"call": "create_booking", "args": BOOKING, "output": "booking"}
                }
            }
        },
    }
    async with app_client(create_app(settings), **AUTH) as client:
        saved = await client.post(
            "/workflows", json={"content": yaml.safe_dump(document), "file": "book.yaml"}
        )
        assert saved.status_code in (200, 201), saved.text
        run = await wait_for(client, await start(client, "book", {}))
        assert run["status"] == "succeeded", run.get("error")
        assert run["nodes"]["reserve"]["output"]["status"] == "reserved"
        stats = (await client.get(f"{DEMO}/_stats")).json()
        assert stats["operations"]["create_booking"]["executed"] == 1
