"""A workflow's timeout survives kill -9: the restarted server keeps the original deadline.

The start of the clock is a recorded step (``workflow:started_at``): replayed after the
restart, it gives back the first process's start, so the run times out ``timeout`` seconds
after it started, not after the restart; and the saga undoes the booking made before the kill
exactly once.

Two processes, as in ``test_server_kill_recovery.py``: A serves the demo travel API, B runs
the workflow durably (SQLite) and is killed while the run waits at a yield.
"""

from __future__ import annotations

import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from dbos import DBOSClient

from tests.support.processes import server, until
from tests.support.servers import free_port

#: the run is killed 3 s after it started; the restart must come before the deadline (15 s of
#: room), and a clock restarted by the new process would end DEADLINE_S after the restart
DEADLINE_S = 18
KILL_AFTER_S = 3
DOCUMENT = f"""
domain: deadline_tests
workflows:
  book_then_wait:
    description: "Book, then wait for an answer that never comes: the deadline ends it"
    timeout: {DEADLINE_S}
    params: {{ passenger: {{ type: str, required: true }} }}
    graph:
      book:
        call: create_booking
        args: {{ flight_id: FL-AMSBCN-20261201-1, passenger: $passenger }}
        output: booking
        compensate_with: {{ call: cancel_booking, args: {{ booking_id: $booking.id }} }}
      confirm:
        type: yield
        depends_on: [book]
        message: "Keep booking $booking.id?"
        expects: {{ ok: {{ type: bool, required: true }} }}
"""
HTTP = httpx.Client(timeout=30)


def at(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


@pytest.mark.timeout(240)
def test_the_workflow_deadline_is_kept_across_kill_9_and_restart(tmp_path: Path) -> None:
    port_a, port_b = free_port(), free_port()
    api = f"http://127.0.0.1:{port_a}"
    runs = f"http://127.0.0.1:{port_b}"
    env_a = {
        "DATA_DIR": str(tmp_path / "a"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "ra/c.yaml"),
        "DURABLE_RUNS": "false",
    }
    env_b = {
        "DATA_DIR": str(tmp_path / "b"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "rb/c.yaml"),
        "PUBLIC_BASE_URL": api,
        "ALLOWED_TARGET_HOSTS": f"127.0.0.1:{port_a}",
        "ENABLE_DEMO_API": "false",
        "DURABLE_RUNS": "true",
        "EXECUTOR_ID": "replica-deadline",
        "SEED_EXAMPLES_FROM": str(Path(__file__).resolve().parents[4] / "examples" / "travel"),
    }
    log = tmp_path / "servers.log"

    def stats() -> dict[str, Any]:
        data: dict[str, Any] = HTTP.get(f"{api}/demo/travel/_stats").json()["operations"]
        return data

    with server(port_a, env_a, log):
        with server(port_b, env_b, log) as b:
            saved = HTTP.post(
                f"{runs}/workflows",
                json={"content": DOCUMENT, "format": "yaml", "file": "deadline.yaml"},
            )
            assert saved.status_code == 201, saved.text
            started = HTTP.post(
                f"{runs}/workflows/book_then_wait/runs", json={"params": {"passenger": "Ada"}}
            )
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            waiting = until(
                lambda: (
                    (r := HTTP.get(f"{runs}/runs/{run_id}").json())["status"] == "waiting_input"
                    and r
                ),
                timeout=60,
            )
            started_at = at(waiting["started_at"])
            # Kill into the deadline, so a clock restarted by the new process would be told
            # apart by a margin (this wait is not an assertion).
            time.sleep(max(0.0, started_at + KILL_AFTER_S - time.time()))
            b.send_signal(signal.SIGKILL)
            b.wait(timeout=10)
        killed_at = time.time()
        assert stats()["cancel_booking"]["calls"] == 0

        with server(port_b, env_b, log):
            restarted_at = time.time()
            assert restarted_at < started_at + DEADLINE_S, "the restart came after the deadline"
            run = until(
                lambda: (
                    (r := HTTP.get(f"{runs}/runs/{run_id}").json())["status"]
                    in ("succeeded", "failed", "cancelled")
                    and r
                ),
                timeout=DEADLINE_S + 60,
            )
        counts = stats()

    assert run["status"] == "failed", run
    assert run["error"]["message"] == f"the workflow timed out after {float(DEADLINE_S)} s"
    assert at(run["started_at"]) == started_at  # the replay did not start the run again
    # A deadline counted from the restart could not end before restarted_at + DEADLINE_S.
    assert at(run["finished_at"]) < restarted_at + DEADLINE_S
    assert at(run["finished_at"]) >= started_at + DEADLINE_S
    # The deadline's start is one recorded step, from before the kill.
    client = DBOSClient(
        system_database_url=f"sqlite:///{tmp_path / 'b' / 'dynamic_tools.journal.sqlite'}"
    )
    try:
        steps = client.list_workflow_steps(run_id)
    finally:
        client.destroy()
    clock = [s for s in steps if s["function_name"] == "workflow:started_at"]
    assert len(clock) == 1
    assert started_at - 5 < float(clock[0]["output"]) < killed_at
    assert counts["create_booking"]["executed"] == 1  # booked once, before the kill
    assert counts["cancel_booking"]["executed"] == 1  # undone once, after the deadline
