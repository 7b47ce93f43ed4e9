"""A redrive is a durable run like any other: killed with -9 while its failed step runs again,
it is finished by a server restarted on another port, still reusing what the failed run had
done (the flights it found are not searched again)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import EXAMPLES
from tests.support.processes import server, until
from tests.support.servers import free_port

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def test_a_redrive_killed_mid_step_finishes_after_a_restart_on_another_port(
    tmp_path: Path,
) -> None:
    env = {
        "DATA_DIR": str(tmp_path / "data"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "registry/config.yaml"),
        "SEED_EXAMPLES_FROM": str(EXAMPLES),
        "DURABLE_RUNS": "true",
        "EXECUTOR_ID": "redrive-replica",
    }
    log = tmp_path / "server.log"
    first_port = free_port()
    with server(first_port, env, log) as first:
        base = f"http://127.0.0.1:{first_port}"

        def run_of(run_id: str, done: set[str]) -> Any:
            run = httpx.get(f"{base}/runs/{run_id}", timeout=5).json()
            return run if run["status"] in done else None

        sold_out = {"operation": "create_booking", "fail_next": 1, "status": 409}
        assert httpx.post(f"{base}/demo/travel/_faults", json=sold_out).status_code == 200
        started = httpx.post(f"{base}/workflows/book_flight/runs", json={"params": PARAMS})
        old = started.json()["run_id"]
        assert until(lambda: run_of(old, {"succeeded", "failed"}))["status"] == "failed"

        slow = {"operation": "create_booking", "fail_next": 0, "latency_ms": 30_000}
        assert httpx.post(f"{base}/demo/travel/_faults", json=slow).status_code == 200
        redriven = httpx.post(f"{base}/runs/{old}/redrive", timeout=10)
        assert redriven.status_code == 202, redriven.text
        new = redriven.json()["run_id"]
        assert redriven.json()["reused"] == ["search", "check", "decide"]

        def booking_in_flight() -> bool:
            run = httpx.get(f"{base}/runs/{new}", timeout=5).json()
            return bool(run["nodes"]["reserve"]["status"] == "running")

        until(booking_in_flight)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)

    second_port = free_port()  # another port: nothing of the run depends on the first
    with server(second_port, env, log):
        base = f"http://127.0.0.1:{second_port}"
        run = until(lambda: run_of(new, {"succeeded", "failed"}), timeout=60)
        stats = httpx.get(f"{base}/demo/travel/_stats", timeout=5).json()["operations"]
    assert run["status"] == "succeeded", run
    assert run["redrive_of"] == old
    for node_id in ("search", "check", "decide"):
        assert run["nodes"][node_id]["detail"]["reused_from"] == old
    # this process searched nothing: what the failed run found was reused, not asked again
    assert stats["search_flights"]["calls"] == 0
    assert stats["check_availability"]["calls"] == 0
    assert stats["create_booking"]["executed"] == 1
