"""Cancel and timeout during a ``parallel``: the compensations registered inside the branches
run too, newest first, against the real demo travel API, on both launchers.

Each branch books (with ``compensate_with``), then makes a slow call (the demo API holds
``check_availability`` for 30 s); the run also booked once before the fan-out. Cancelling the
run (REST) or hitting the workflow's timeout must undo all three bookings: the two made inside
the branches first (the last branch first), then the one made before. The demo API's counters
say what was executed; the run's events (and, for durable runs, DBOS's recorded steps) say it
was done as the run's compensation steps.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dbos import DBOSClient

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.processes import server
from tests.support.servers import free_port, serve

DOCUMENT = """
domain: saga_tests
workflows:
  flight_then_wait:
    description: "Book a flight, then a slow call"
    params: { passenger: { type: str, required: true } }
    graph:
      book:
        call: create_booking
        args: { flight_id: FL-AMSBCN-20261201-1, passenger: $passenger }
        output: booking
        compensate_with: { call: cancel_booking, args: { booking_id: $booking.id } }
      wait:
        call: check_availability
        depends_on: [book]
        args: { flight_id: FL-AMSBCN-20261201-2 }

  hotel_then_wait:
    description: "Book a hotel, then a slow call"
    params: { guest: { type: str, required: true } }
    graph:
      book:
        call: book_hotel
        args: { hotel_id: HT-BARCELONA-1, checkin: "2026-12-01", checkout: "2026-12-03",
                guest: $guest }
        output: stay
        compensate_with: { call: cancel_hotel, args: { booking_id: $stay.id } }
      wait:
        call: check_availability
        depends_on: [book]
        args: { flight_id: FL-AMSBCN-20261201-3 }

  trip:
    description: "One booking, then two branches that book and wait"
    params: { passenger: { type: str, required: true } }
    graph:
      first:
        call: create_booking
        args: { flight_id: FL-AMSBCN-20261202-1, passenger: $passenger }
        output: outbound
        compensate_with: { call: cancel_booking, args: { booking_id: $outbound.id } }
      both:
        type: parallel
        depends_on: [first]
        branches:
          flight: { workflow: flight_then_wait, args: { passenger: $passenger } }
          hotel: { workflow: hotel_then_wait, args: { guest: $passenger } }

  trip_with_deadline:
    description: "The same, with a workflow timeout that hits while the branches wait"
    timeout: 5
    params: { passenger: { type: str, required: true } }
    graph:
      first:
        call: create_booking
        args: { flight_id: FL-AMSBCN-20261202-1, passenger: $passenger }
        output: outbound
        compensate_with: { call: cancel_booking, args: { booking_id: $outbound.id } }
      both:
        type: parallel
        depends_on: [first]
        branches:
          flight: { workflow: flight_then_wait, args: { passenger: $passenger } }
          hotel: { workflow: hotel_then_wait, args: { guest: $passenger } }
"""
pytestmark = pytest.mark.timeout(240)
UNDO_ORDER = ["saga:both/hotel/book", "saga:both/flight/book", "saga:first"]


HTTP = httpx.Client(timeout=30)


def until(check: Callable[[], Any], what: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def run_of(url: str, run_id: str) -> dict[str, Any]:
    run: dict[str, Any] = HTTP.get(f"{url}/runs/{run_id}").json()
    return run


def events(url: str, run_id: str) -> list[dict[str, Any]]:
    """Every event of an ended run, from its SSE stream (which closes after the last one)."""
    found = []
    with httpx.stream("GET", f"{url}/runs/{run_id}/events", timeout=30) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                found.append(json.loads(line[len("data: ") :]))
    return found


@pytest.fixture(scope="module")
def demo_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """The demo travel API in a process of its own.

    Its slow calls outlive the runs that abandoned them; in a separate process they cannot
    hold up the app server's shutdown (and DBOS, one per process, with it).
    """
    root = tmp_path_factory.mktemp("demo-api")
    port = free_port()
    env = {
        "DATA_DIR": str(root / "data"),
        "REGISTRY_CONFIG_PATH": str(root / "registry/config.yaml"),
        "DURABLE_RUNS": "false",
    }
    with server(port, env, root / "server.log"):
        yield f"http://127.0.0.1:{port}", port


@pytest.fixture(params=["local", "durable"])
def app_url(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    make_settings: Callable[..., Settings],
    demo_api: tuple[str, int],
) -> Iterator[tuple[str, str, Settings]]:
    """The app on one launcher, its tools calling the demo API; yields (app, api, settings)."""
    api, api_port = demo_api
    durable = request.param == "durable"
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml",
        seed_examples_from=EXAMPLES,
        durable_runs=durable,
        executor_id="saga-replica" if durable else None,
        public_base_url=api,
        allowed_target_hosts=[f"127.0.0.1:{api_port}"],
        enable_demo_api=False,
    )
    assert HTTP.post(f"{api}/demo/travel/_reset").status_code == 200
    fault = HTTP.post(
        f"{api}/demo/travel/_faults",
        json={"operation": "check_availability", "latency_ms": 30_000},
    )
    assert fault.status_code == 200, fault.text
    with serve(create_app(settings), port=settings.port) as url:
        saved = HTTP.post(
            f"{url}/workflows",
            json={"content": DOCUMENT, "format": "yaml", "file": "saga_tests.yaml"},
        )
        assert saved.status_code == 201, saved.text
        yield url, api, settings


def stats(api: str) -> dict[str, Any]:
    data: dict[str, Any] = HTTP.get(f"{api}/demo/travel/_stats").json()["operations"]
    return data


def both_branches_waiting(url: str, run_id: str) -> bool:
    run = run_of(url, run_id)
    if run["status"] not in ("pending", "running"):
        raise AssertionError(f"the run ended before the branches waited: {run}")
    nodes = run["nodes"]
    return all(
        nodes.get(f"both/{branch}/wait", {}).get("status") == "running"
        for branch in ("flight", "hotel")
    )


def assert_all_bookings_undone(url: str, api: str, run_id: str, settings: Settings) -> None:
    counts = stats(api)
    assert counts["create_booking"]["executed"] == 2
    assert counts["book_hotel"]["executed"] == 1
    assert counts["cancel_booking"]["executed"] == 2, counts["cancel_booking"]
    assert counts["cancel_hotel"]["executed"] == 1, counts["cancel_hotel"]
    compensated = [e for e in events(url, run_id) if e["type"] == "compensated"]
    assert [e["name"] for e in compensated] == UNDO_ORDER
    assert all(e["ok"] for e in compensated)
    assert [e["call"] for e in compensated] == [
        "cancel_hotel",
        "cancel_booking",
        "cancel_booking",
    ]
    if settings.durable_runs:  # recorded as steps of the run's workflow
        client = DBOSClient(system_database_url=settings.durable_database_url)
        try:
            steps = [s["function_name"] for s in client.list_workflow_steps(run_id)]
        finally:
            client.destroy()
        assert [s for s in steps if s.startswith("compensate:")] == [
            f"compensate:{name}" for name in UNDO_ORDER
        ]


def test_cancel_during_a_parallel_undoes_the_bookings_made_inside_the_branches(
    app_url: tuple[str, str, Settings],
) -> None:
    url, api, settings = app_url
    started = HTTP.post(f"{url}/workflows/trip/runs", json={"params": {"passenger": "Ada"}})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    until(lambda: both_branches_waiting(url, run_id), "both branches to book and start waiting")

    cancelled = HTTP.post(f"{url}/runs/{run_id}/cancel", timeout=60)

    assert cancelled.status_code == 200, cancelled.text
    run = until(
        lambda: (r := run_of(url, run_id))["status"] == "cancelled" and r,
        "the run to end cancelled",
    )
    assert run["error"]["message"] == "the run was cancelled"
    assert_all_bookings_undone(url, api, run_id, settings)


def test_a_workflow_timeout_during_a_parallel_undoes_the_bookings_made_inside_the_branches(
    app_url: tuple[str, str, Settings],
) -> None:
    url, api, settings = app_url
    started = HTTP.post(
        f"{url}/workflows/trip_with_deadline/runs", json={"params": {"passenger": "Ada"}}
    )
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    until(lambda: both_branches_waiting(url, run_id), "both branches to book and start waiting")

    run = until(
        lambda: (r := run_of(url, run_id))["status"] == "failed" and r,
        "the run to time out",
    )
    assert run["error"]["message"] == "the workflow timed out after 5.0 s", run["error"]
    assert_all_bookings_undone(url, api, run_id, settings)
