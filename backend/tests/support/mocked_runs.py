"""Runs over REST with mocked tools: the travel answers, starting a run, waiting for a state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx

from dynamic_tools.engine.local import MockTools

FLIGHT = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
HOTEL = {"city": "LIS", "checkin": "2026-12-01", "checkout": "2026-12-03", "guest": "Ada"}
TERMINAL = {"succeeded", "failed", "cancelled"}


def travel_tools(**overrides: Any) -> MockTools:
    answers: dict[str, Any] = {
        "search_flights": [
            {"id": "FL1", "airline": "KLM", "departure_time": "07:10", "price": 120.0},
            {"id": "FL2", "airline": "KLM", "departure_time": "12:40", "price": 99.0},
        ],
        "check_availability": {"flight_id": "FL1", "seats_available": 4},
        "create_booking": {"id": "BK1", "status": "reserved"},
        "add_to_waitlist": {"id": "WL1"},
        "cancel_booking": {"status": "cancelled"},
        "process_payment": {"id": "PAY1", "status": "paid"},
    }
    return MockTools({**answers, **overrides})


async def start(client: httpx.AsyncClient, workflow_id: str, params: dict[str, Any]) -> str:
    answer = await client.post(f"/workflows/{workflow_id}/runs", json={"params": params})
    assert answer.status_code == 202, answer.text
    assert answer.json()["status"] in ("pending", "running", "waiting_input", "succeeded")
    run_id: str = answer.json()["run_id"]
    return run_id


async def wait_for(
    client: httpx.AsyncClient,
    run_id: str,
    ready: Callable[[dict[str, Any]], bool] | None = None,
    timeout_s: float = 10,
) -> dict[str, Any]:
    """The run once ``ready`` says so (by default: once it has ended); fails after ``timeout_s``."""
    ready = ready or (lambda run: run["status"] in TERMINAL)
    deadline = time.monotonic() + timeout_s
    while True:
        run: dict[str, Any] = (await client.get(f"/runs/{run_id}")).json()
        if ready(run):
            return run
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.02)


def finished(run: dict[str, Any]) -> bool:
    return run["status"] in TERMINAL and run["nodes"]["search"]["input"] is not None
