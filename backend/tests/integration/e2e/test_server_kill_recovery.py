"""kill -9 of a real server process mid-run: after a restart ON ANOTHER PORT (no EXECUTOR_ID
set) the run completes, completed steps are not re-executed and the interrupted call is
repeated with the same idempotency key (so the booking is made once).

Two processes: A serves the demo travel API (its counters must outlive B), B runs the
workflows with durable runs (SQLite) and calls A.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import EXAMPLES
from tests.support.processes import CLI, server, until
from tests.support.servers import free_port

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def test_kill_9_mid_call_then_restart_completes_without_repeating_steps(tmp_path: Path) -> None:
    port_a, port_b, port_b2 = free_port(), free_port(), free_port()
    api = f"http://127.0.0.1:{port_a}"
    runs = f"http://127.0.0.1:{port_b}"
    restarted = f"http://127.0.0.1:{port_b2}"
    env_a = {
        "DATA_DIR": str(tmp_path / "a"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "ra/c.yaml"),
        "DURABLE_RUNS": "false",
    }
    env_b = {
        "DATA_DIR": str(tmp_path / "b"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "rb/c.yaml"),
        "SEED_EXAMPLES_FROM": str(EXAMPLES),
        "PUBLIC_BASE_URL": api,
        "ALLOWED_TARGET_HOSTS": f"127.0.0.1:{port_a}",
        "ENABLE_DEMO_API": "false",
        "DURABLE_RUNS": "true",
    }
    log = tmp_path / "servers.log"

    def stats() -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(f"{api}/demo/travel/_stats").json()["operations"]
        return data

    with server(port_a, env_a, log):
        httpx.post(
            f"{api}/demo/travel/_faults", json={"operation": "create_booking", "latency_ms": 3000}
        )
        with server(port_b, env_b, log) as b:
            started = httpx.post(f"{runs}/workflows/book_flight/runs", json={"params": PARAMS})
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            # The booking call is in flight (A holds it for 3 s) when B is killed.
            until(
                lambda: (
                    httpx.get(f"{runs}/runs/{run_id}").json()["nodes"]["reserve"]["status"]
                    == "running"
                )
            )
            time.sleep(1.0)
            assert stats()["create_booking"]["executed"] == 0
            b.send_signal(signal.SIGKILL)
            b.wait(timeout=10)
        with server(port_b2, env_b, log):  # the same data, another port
            run = until(
                lambda: (
                    (r := httpx.get(f"{restarted}/runs/{run_id}").json())["status"]
                    in ("succeeded", "failed")
                    and r
                )
            )
            assert run["status"] == "succeeded", run
            assert run["result"]["status"] == "reserved"
        counts = stats()
    assert counts["search_flights"]["calls"] == 1  # completed before the kill: not repeated
    assert counts["check_availability"]["calls"] == 1
    booking = counts["create_booking"]
    # Never booked twice. If A finished the killed request, the repeated call (same
    # Idempotency-Key) was a replay; if A dropped it with the connection, only one call counts.
    assert booking["executed"] == 1
    assert (booking["calls"], booking["replayed"]) in ((2, 1), (1, 0)), booking


def test_a_second_server_on_the_same_journal_refuses_to_start_naming_the_first(
    tmp_path: Path,
) -> None:
    port_a, port_b = free_port(), free_port()
    env = {
        "DATA_DIR": str(tmp_path / "data"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "registry/c.yaml"),
        "DURABLE_RUNS": "true",
    }
    log = tmp_path / "servers.log"
    with server(port_a, env, log) as first:
        second = subprocess.run(
            [CLI, "serve", "--host", "127.0.0.1", "--port", str(port_b)],
            env={**os.environ, "LOG_LEVEL": "WARNING", "OPENAI_API_KEY": "", **env},
            capture_output=True,
            timeout=60,
        )
        assert second.returncode != 0
        said = (second.stdout + second.stderr).decode()
        assert "in use by another process" in said, said[-2000:]
        assert f"pid {first.pid}" in said
        assert f"serving http://127.0.0.1:{port_a}" in said
        assert str(tmp_path / "data" / "dynamic_tools.journal.sqlite") in said
        # The first server is unharmed.
        assert httpx.get(f"http://127.0.0.1:{port_a}/healthz").status_code == 200
