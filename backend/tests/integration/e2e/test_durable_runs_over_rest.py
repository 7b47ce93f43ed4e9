"""Durable runs through the app: a paused run survives a server restart and is resumed."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.servers import serve

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def wait_for(url: str, run_id: str, status: str, timeout: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}").json()
        if run["status"] == status:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never reached {status}: {run}")


def test_a_paused_run_survives_a_restart_and_completes(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml",
        seed_examples_from=EXAMPLES,
        durable_runs=True,
        executor_id="test-replica-1",
    )
    with serve(create_app(settings), port=settings.port) as url:
        started = httpx.post(f"{url}/workflows/book_with_approval/runs", json={"params": PARAMS})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        waiting = wait_for(url, run_id, "waiting_input")
        assert waiting["waiting"]["expects"]["selected_flight_id"]["type"] == "str"
    # The server is gone; a new one with the same executor id picks the run up.
    with serve(create_app(settings), port=settings.port) as url:
        assert httpx.get(f"{url}/runs/{run_id}").json()["status"] == "waiting_input"
        flights = httpx.get(
            f"{url}/demo/travel/flights",
            params={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
        ).json()
        answer = httpx.post(
            f"{url}/runs/{run_id}/resume", json={"values": {"selected_flight_id": flights[1]["id"]}}
        )
        assert answer.status_code in (200, 202), answer.text
        done = wait_for(url, run_id, "succeeded")
        assert done["result"]["status"] == "captured"
        assert done["nodes"]["book"]["input"]["flight_id"] == flights[1]["id"]
        ready = httpx.get(f"{url}/readyz").json()
        assert ready["status"] == "ready"
