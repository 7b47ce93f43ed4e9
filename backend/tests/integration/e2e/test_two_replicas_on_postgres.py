"""Two real server processes (replicas A and B) on one PostgreSQL database.

- A run started on A pauses at a yield; it is answered through B's REST API
  (``POST /runs/{id}/resume`` on B) and completes (A executes it, B sees it end).
- kill -9 of the replica executing a booking call (a run started through A goes to whichever
  replica takes it from the run queue): the other refuses to take over while it is alive,
  then, once it is gone, ``POST /runs/recover?executor=<its id>`` resumes the run there, which
  completes without repeating a completed step and without booking twice (the demo API's
  counters). Automatic failover is off here; ``test_replicas_failover_on_postgres.py`` tests it.

A third process serves the demo travel API (its counters outlive the replicas). Each test gets
a database of its own, dropped at the end. PostgreSQL is ``TEST_DATABASE_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``); when it does not answer the test fails, unless
``DT_NO_POSTGRES=1``.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import EXAMPLES
from tests.support.postgres import fresh_database
from tests.support.processes import server, until
from tests.support.servers import free_port

BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
HTTP = httpx.Client(timeout=60)


@pytest.fixture
def database_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test (dropped afterwards)."""
    with fresh_database("dt_replicas") as url:
        yield url


def replica_env(
    tmp_path: Path, name: str, database_url: str, api: str, port: int
) -> dict[str, str]:
    return {
        "DATA_DIR": str(tmp_path / name / "data"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / name / "registry" / "config.yaml"),
        "SEED_EXAMPLES_FROM": str(EXAMPLES),
        "DATABASE_URL": database_url,
        "DURABLE_RUNS": "true",
        "EXECUTOR_ID": f"replica-{name}",
        "PUBLIC_BASE_URL": api,
        "ALLOWED_TARGET_HOSTS": f"127.0.0.1:{port}",
        "ENABLE_DEMO_API": "false",
    }


def run_status(url: str, run_id: str) -> dict[str, Any]:
    run: dict[str, Any] = HTTP.get(f"{url}/runs/{run_id}").json()
    return run


def ended(url: str, run_id: str) -> dict[str, Any] | None:
    run = run_status(url, run_id)
    return run if run["status"] in ("succeeded", "failed", "cancelled") else None


@pytest.mark.timeout(300)
def test_two_replicas_share_runs_resume_anywhere_and_recover_a_dead_one(
    tmp_path: Path, database_url: str
) -> None:
    port_api, port_a, port_b = free_port(), free_port(), free_port()
    api = f"http://127.0.0.1:{port_api}"
    a_url, b_url = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"
    env_api = {
        "DATA_DIR": str(tmp_path / "api"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "api-registry/config.yaml"),
        "DURABLE_RUNS": "false",
    }
    log = tmp_path / "servers.log"

    def stats() -> dict[str, Any]:
        data: dict[str, Any] = HTTP.get(f"{api}/demo/travel/_stats").json()["operations"]
        return data

    # A starts first (it creates the tables); B then starts on the same database.
    # Automatic failover off: this test takes the dead replica's runs over by hand.
    manual = {"FAILOVER_CHECK_S": "0"}
    env_a = {**replica_env(tmp_path, "a", database_url, api, port_api), **manual}
    env_b = {**replica_env(tmp_path, "b", database_url, api, port_api), **manual}
    with (
        server(port_api, env_api, log),
        server(port_a, env_a, log) as a,
        server(port_b, env_b, log) as b,
    ):
        # --- 1. a run paused on A is answered through B ---------------------------
        started = HTTP.post(f"{a_url}/workflows/book_with_approval/runs", json={"params": BOOK})
        assert started.status_code == 202, started.text
        paused = started.json()["run_id"]
        waiting = until(
            lambda: (r := run_status(b_url, paused))["status"] == "waiting_input" and r,
            timeout=60,
        )
        assert waiting["waiting"]["node_id"] == "present_options"
        flights = HTTP.get(
            f"{api}/demo/travel/flights",
            params={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
        ).json()
        t0 = time.monotonic()
        answer = HTTP.post(
            f"{b_url}/runs/{paused}/resume",
            json={"values": {"selected_flight_id": flights[1]["id"]}},
        )
        assert answer.status_code in (200, 202), answer.text
        done = until(lambda: ended(b_url, paused), timeout=60)
        resume_latency = time.monotonic() - t0
        assert done["status"] == "succeeded", done
        assert done["result"]["status"] == "captured"
        assert done["nodes"]["book"]["input"]["flight_id"] == flights[1]["id"]
        assert run_status(a_url, paused)["status"] == "succeeded"  # one shared store

        # --- 2. kill -9 of the replica executing a booking; the other recovers it ---
        HTTP.post(
            f"{api}/demo/travel/_faults",
            json={"operation": "create_booking", "latency_ms": 3000},
        )
        before = stats()
        started = HTTP.post(f"{a_url}/workflows/book_flight/runs", json={"params": BOOK})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        until(
            lambda: run_status(b_url, run_id)["nodes"]["reserve"]["status"] == "running",
            timeout=60,
        )
        # Started through A, executed by whichever replica took it from the run queue.
        holder = run_status(a_url, run_id)["executor"]["id"]
        assert holder in ("replica-a", "replica-b")
        victim, survivor = (a, b_url) if holder == "replica-a" else (b, a_url)
        alive = HTTP.post(f"{survivor}/runs/recover", params={"executor": holder})
        assert alive.status_code == 409, alive.text  # the victim holds its presence lock
        assert "is alive" in alive.json()["message"]
        time.sleep(1.0)  # let the booking request reach the API (not an assertion)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        # The API finishes the request A had sent: wait for it (bounded), so B's
        # repeat (same Idempotency-Key) meets the stored answer, not a request in flight.
        deadline = time.monotonic() + 20
        while (
            stats()["create_booking"]["executed"] == before["create_booking"]["executed"]
            and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        assert run_status(survivor, run_id)["status"] == "running"

        t1 = time.monotonic()
        recovered = HTTP.post(f"{survivor}/runs/recover", params={"executor": holder})
        assert recovered.status_code == 200, recovered.text
        assert recovered.json()["runs"] == [run_id]
        finished = until(lambda: ended(survivor, run_id), timeout=90)
        recovery_time = time.monotonic() - t1
        assert finished["status"] == "succeeded", finished
        assert finished["result"]["status"] == "reserved"
        again = HTTP.post(f"{survivor}/runs/recover", params={"executor": holder})
        assert again.status_code == 200 and again.json()["runs"] == []
        takeovers = f'dynamic_tools_run_takeovers_total{{executor="{holder}"}} 1.0'
        assert takeovers in HTTP.get(f"{survivor}/metrics").text
        empty = HTTP.post(f"{survivor}/runs/recover", params={"executor": ""})
        assert empty.status_code == 422, empty.text
        after = stats()

    def delta(operation: str, counter: str) -> int:
        return int(after[operation][counter]) - int(before[operation][counter])

    # Completed before the kill: not repeated by B.
    assert delta("search_flights", "calls") == 1
    assert delta("check_availability", "calls") == 1
    # Booked once: A's request executed (or never arrived) and B's repeat was a replay.
    assert delta("create_booking", "executed") == 1
    assert (delta("create_booking", "calls"), delta("create_booking", "replayed")) in (
        (2, 1),
        (1, 0),
    )
    print(
        f"\n[two replicas on PostgreSQL] resume through the other replica: "
        f"{resume_latency:.2f} s to succeeded; recovery after kill -9: "
        f"{recovery_time:.2f} s from POST /runs/recover to succeeded"
    )
