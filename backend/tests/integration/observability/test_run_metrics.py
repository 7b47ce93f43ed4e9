"""/metrics after real runs: runs started and finished by workflow and status, active and
waiting runs (counted in the database), node durations by tool and outcome, retries,
takeovers; and no double count when a durable run is replayed after a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from dynamic_tools.api.app import create_app
from dynamic_tools.observability.run_metrics import record_takeover
from dynamic_tools.settings import Settings
from tests.integration.observability.conftest import Shop, start_run, wait_for_run
from tests.support.app_client import app_client
from tests.support.servers import serve


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` with exactly ``labels``; None when absent."""
    for family in text_string_to_metric_families(text):
        for item in family.samples:
            if item.name == name and item.labels == labels:
                return float(item.value)
    return None


async def scrape(client: httpx.AsyncClient) -> str:
    answer = await client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    return answer.text


async def test_metrics_count_runs_nodes_retries_and_waiting_runs(
    shop_settings: Callable[..., Settings], shop: Shop
) -> None:
    async with app_client(create_app(shop_settings())) as client:
        before = await scrape(client)
        assert sample(before, "dynamic_tools_runs_started_total", workflow="checkout") is None
        run_id = await start_run(client, "checkout", order="flaky-fail-1")
        await wait_for_run(client, run_id)
        waiting_id = await start_run(client, "approve", order="ok-2")
        await wait_for_run(client, waiting_id, lambda r: r["status"] == "waiting_input")
        text = await scrape(client)

        assert sample(text, "dynamic_tools_runs_started_total", workflow="checkout") == 1
        assert sample(text, "dynamic_tools_runs_started_total", workflow="approve") == 1
        finished = "dynamic_tools_runs_finished_total"
        assert sample(text, finished, workflow="checkout", status="failed") == 1
        assert sample(text, finished, workflow="approve", status="succeeded") is None
        assert sample(text, "dynamic_tools_node_retries_total", tool="charge_card") == 1
        assert sample(text, "dynamic_tools_node_retries_total", tool="hold_seat") is None
        count = "dynamic_tools_node_duration_seconds_count"
        assert sample(text, count, tool="hold_seat", outcome="succeeded") == 2
        assert sample(text, count, tool="charge_card", outcome="succeeded") == 1
        assert sample(text, count, tool="confirm_order", outcome="failed") == 1
        assert sample(text, count, tool="confirm_order", outcome="succeeded") is None
        total = "dynamic_tools_node_duration_seconds_sum"
        assert (sample(text, total, tool="charge_card", outcome="succeeded") or 0) > 0
        # The gauges come from the database: only the waiting run is not ended.
        assert sample(text, "dynamic_tools_runs_active", workflow="approve") == 1
        assert sample(text, "dynamic_tools_runs_waiting", workflow="approve") == 1
        assert sample(text, "dynamic_tools_runs_active", workflow="checkout") is None
        # The app's own metrics are still there.
        assert (
            sample(
                text,
                "dynamic_tools_http_requests_total",
                method="POST",
                route="/workflows/{workflow_id}/runs",
                status="202",
            )
            == 2
        )

        values = {"values": {"approved": True}}
        answer = await client.post(f"/runs/{waiting_id}/resume", json=values)
        assert answer.status_code == 200, answer.text
        await wait_for_run(client, waiting_id)
        after = await scrape(client)
        assert sample(after, finished, workflow="approve", status="succeeded") == 1
        assert sample(after, "dynamic_tools_runs_active", workflow="approve") is None
        assert sample(after, "dynamic_tools_runs_waiting", workflow="approve") is None


async def test_takeovers_are_counted_by_executor(
    shop_settings: Callable[..., Settings],
) -> None:
    async with app_client(create_app(shop_settings())) as client:
        name = "dynamic_tools_run_takeovers_total"
        before = sample(await scrape(client), name, executor="replica-gone-1") or 0
        record_takeover("replica-gone-1", 3)
        record_takeover("replica-gone-1", 0)
        assert sample(await scrape(client), name, executor="replica-gone-1") == before + 3


def test_a_replayed_run_is_not_counted_twice(
    shop_settings: Callable[..., Settings], shop: Shop
) -> None:
    """A durable run started by one process and finished by the next: started once (by the
    first), finished once (by the second); the waiting gauge holds across the restart."""
    settings = shop_settings(durable_runs=True, executor_id="otel-metrics-1")
    with serve(create_app(settings), port=settings.port) as url:
        run_id = httpx.post(
            f"{url}/workflows/approve/runs", json={"params": {"order": "ok-3"}}
        ).json()["run_id"]
        _poll(url, run_id, "waiting_input")
        first = httpx.get(f"{url}/metrics").text
        assert sample(first, "dynamic_tools_runs_started_total", workflow="approve") == 1
    with serve(create_app(settings), port=settings.port) as url:
        second = httpx.get(f"{url}/metrics").text
        assert sample(second, "dynamic_tools_runs_waiting", workflow="approve") == 1
        httpx.post(f"{url}/runs/{run_id}/resume", json={"values": {"approved": True}})
        _poll(url, run_id, "succeeded")
        done = httpx.get(f"{url}/metrics").text
        # The replay re-emitted run_started; it was a duplicate, so not counted here.
        assert sample(done, "dynamic_tools_runs_started_total", workflow="approve") is None
        assert (
            sample(
                done, "dynamic_tools_runs_finished_total", workflow="approve", status="succeeded"
            )
            == 1
        )
        assert sample(done, "dynamic_tools_runs_waiting", workflow="approve") is None
        count = "dynamic_tools_node_duration_seconds_count"
        assert sample(done, count, tool="charge_card", outcome="succeeded") == 1
        assert sample(done, count, tool="hold_seat", outcome="succeeded") is None


def _poll(url: str, run_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}").json()
        if run["status"] == status:
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.05)
