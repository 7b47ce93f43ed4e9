"""Replicas on one PostgreSQL: automatic failover and work spread through the run queue.

- Three real server processes. Replica A executes two runs that paused at their approval
  yield; one is approved (through B) and is in the middle of its slow booking call on A when
  A is killed (-9). Without anyone calling
  ``POST /runs/recover``, a survivor takes A's runs over within the failover bound, exactly
  once although two survivors race for them: the booking completes with its side effect made
  once (the repeated call reuses the Idempotency-Key), and the paused run is answered through
  the replica that does not execute it.
- Two replicas with ``RUN_CONCURRENCY=1``: two runs started through A execute one on each
  replica, and the events of the one B executes stream from A.

A separate process serves the demo travel API (its counters outlive the replicas).
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.e2e.test_two_replicas_on_postgres import (
    BOOK,
    database_url,  # noqa: F401 - a fixture
    ended,
    replica_env,
    run_status,
)
from tests.support.processes import server, until
from tests.support.servers import free_port

HTTP = httpx.Client(timeout=60)
FAILOVER_CHECK_S = 1.0
#: the booking call A is killed in: long enough to be in flight at the kill (1 s after the node
#: starts), and the survivor's repeat takes it again
BOOKING_MS = 8000


def api_env(tmp_path: Path) -> dict[str, str]:
    return {
        "DATA_DIR": str(tmp_path / "api"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "api-registry/config.yaml"),
        "DURABLE_RUNS": "false",
    }


@pytest.mark.timeout(300)
def test_a_dead_replica_is_taken_over_automatically_exactly_once(
    tmp_path: Path,
    database_url: str,  # noqa: F811 - the fixture
) -> None:
    port_api, port_a, port_b, port_c = (free_port() for _ in range(4))
    api = f"http://127.0.0.1:{port_api}"
    urls = {
        name: f"http://127.0.0.1:{port}"
        for name, port in zip("abc", (port_a, port_b, port_c), strict=True)
    }
    logs = {name: tmp_path / f"replica-{name}.log" for name in "abc"}

    def env(name: str, port: int) -> dict[str, str]:
        return {
            **replica_env(tmp_path, name, database_url, api, port_api),
            "FAILOVER_CHECK_S": str(FAILOVER_CHECK_S),
            "LOG_JSON": "false",
        }

    def stats() -> dict[str, Any]:
        data: dict[str, Any] = HTTP.get(f"{api}/demo/travel/_stats").json()["operations"]
        return data

    with server(port_api, api_env(tmp_path), tmp_path / "api.log"):
        with server(port_a, env("a", port_a), logs["a"]) as a:
            # A is alone: it executes both runs, which pause at their approval yield. A run
            # that has started stays with its executor, so both are A's whatever starts next.
            ids = [
                HTTP.post(
                    f"{urls['a']}/workflows/book_with_approval/runs", json={"params": BOOK}
                ).json()["run_id"]
                for _ in range(2)
            ]
            for run_id in ids:
                until(lambda r=run_id: run_status(urls["a"], r)["status"] == "waiting_input", 60)
            booking_id, paused_id = ids
            flights = HTTP.get(
                f"{api}/demo/travel/flights",
                params={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
            ).json()
            before = stats()
            HTTP.post(
                f"{api}/demo/travel/_faults",
                json={"operation": "create_booking", "latency_ms": BOOKING_MS},
            )
            with (
                server(port_b, env("b", port_b), logs["b"]),
                server(port_c, env("c", port_c), logs["c"]),
            ):
                # Approved through B; A, which holds the run, makes the slow booking call.
                answer = HTTP.post(
                    f"{urls['b']}/runs/{booking_id}/resume",
                    json={"values": {"selected_flight_id": flights[1]["id"]}},
                )
                assert answer.status_code in (200, 202), answer.text
                until(
                    lambda: (
                        run_status(urls["b"], booking_id)["nodes"]["book"]["status"] == "running"
                    ),
                    timeout=60,
                )
                holder = run_status(urls["c"], booking_id)["executor"]
                assert holder["id"] == "replica-a" and holder["alive"] is True, holder
                time.sleep(1.0)  # the booking request reaches the API (not an assertion)
                a.send_signal(signal.SIGKILL)
                a.wait(timeout=10)
                killed_at, killed_wall = time.monotonic(), time.time()
                until(
                    lambda: run_status(urls["b"], booking_id)["executor"]["id"] != "replica-a",
                    timeout=60,
                )
                moved = time.monotonic() - killed_at
                finished = until(lambda: ended(urls["b"], booking_id), timeout=90)
                took = time.monotonic() - killed_at
                assert finished["status"] == "succeeded", finished
                assert finished["result"]["status"] == "captured"
                assert finished["nodes"]["book"]["input"]["flight_id"] == flights[1]["id"]
                assert finished["executor"]["id"] in ("replica-b", "replica-c")

                # The paused run moved too; answer it through the replica NOT executing it.
                waiting = until(
                    lambda: (
                        (r := run_status(urls["c"], paused_id))["executor"]["id"]
                        in ("replica-b", "replica-c")
                        and r["status"] == "waiting_input"
                        and r
                    ),
                    timeout=60,
                )
                executing = waiting["executor"]["id"][-1]
                other = "c" if executing == "b" else "b"
                answer = HTTP.post(
                    f"{urls[other]}/runs/{paused_id}/resume",
                    json={"values": {"selected_flight_id": flights[0]["id"]}},
                )
                assert answer.status_code in (200, 202), answer.text
                # The survivor that took over counted both runs; the other counted none.
                counted = [
                    HTTP.get(f"{urls[n]}/metrics").text.count(
                        'dynamic_tools_run_takeovers_total{executor="replica-a"} 2.0'
                    )
                    for n in "bc"
                ]
                assert sorted(counted) == [0, 1], counted
                done = until(lambda: ended(urls[other], paused_id), timeout=60)
                assert done["status"] == "succeeded", done
                assert done["result"]["status"] == "captured"
        after = stats()

    def delta(operation: str, counter: str) -> int:
        return int(after[operation][counter]) - int(before[operation][counter])

    # The killed booking: made once; A's request and the survivor's repeat share a key.
    assert delta("create_booking", "executed") == 2  # one per run
    assert delta("create_booking", "replayed") in (0, 1)
    assert delta("process_payment", "executed") == 2
    assert delta("search_flights", "calls") == 0  # done before the kill: never repeated
    # Exactly one survivor took A's runs over (the two runs' workflows, once).
    takeovers = [
        int(m.group(1))
        for name in "bc"
        for m in re.finditer(
            r"took over (\d+) workflows of executor replica-a", logs[name].read_text()
        )
    ]
    assert takeovers == [2], takeovers
    stamps = [
        time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + float("0." + m.group(2))
        for name in "bc"
        for m in re.finditer(
            r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d+) .*took over", logs[name].read_text(), re.M
        )
    ]
    print(f"\n[failover] takeover logged {stamps[0] - killed_wall:.1f} s after kill -9")
    print(
        f"\n[failover] FAILOVER_CHECK_S={FAILOVER_CHECK_S}: run taken over {moved:.1f} s after "
        f"kill -9, finished after {took:.1f} s (the booking call takes {BOOKING_MS / 1000:g} s)"
    )


@pytest.mark.timeout(240)
def test_runs_started_on_one_replica_execute_on_another_with_room(
    tmp_path: Path,
    database_url: str,  # noqa: F811 - the fixture
) -> None:
    port_api, port_a, port_b = free_port(), free_port(), free_port()
    api = f"http://127.0.0.1:{port_api}"
    a_url, b_url = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"

    def env(name: str) -> dict[str, str]:
        return {**replica_env(tmp_path, name, database_url, api, port_api), "RUN_CONCURRENCY": "1"}

    log = tmp_path / "servers.log"
    with server(port_api, api_env(tmp_path), log):
        HTTP.post(
            f"{api}/demo/travel/_faults", json={"operation": "create_booking", "latency_ms": 3000}
        )
        with server(port_a, env("a"), log), server(port_b, env("b"), log):
            ids = [
                HTTP.post(f"{a_url}/workflows/book_flight/runs", json={"params": BOOK}).json()[
                    "run_id"
                ]
                for _ in range(2)
            ]
            for run_id in ids:
                until(
                    lambda r=run_id: (
                        run_status(a_url, r)["nodes"]["reserve"]["status"] == "running"
                    ),
                    timeout=60,
                )
            executors = {run_status(a_url, r)["executor"]["id"] for r in ids}
            assert executors == {"replica-a", "replica-b"}  # one slot each: both replicas work
            on_b = next(r for r in ids if run_status(a_url, r)["executor"]["id"] == "replica-b")
            # Its events stream from A, to the end.
            with HTTP.stream("GET", f"{a_url}/runs/{on_b}/events", timeout=60) as stream:
                kinds = [
                    line.split(":", 1)[1].strip()
                    for line in stream.iter_lines()
                    if line.startswith("event:")
                ]
            assert kinds[0] == "run_created" and kinds[-1] == "run_succeeded", kinds
            assert "node_succeeded" in kinds
            for run_id in ids:
                assert until(lambda r=run_id: ended(b_url, r), timeout=60)["status"] == "succeeded"
