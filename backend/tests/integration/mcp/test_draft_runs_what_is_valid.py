"""A run of a draft holding several workflows (workflow.run, workflow.execute with ``content``)
starts the named workflow when it, the sub-workflows it reaches and the document are valid; the
other workflows' errors come back as ``left_out`` and a warning. Validation
(POST /workflows/validate, workflow.validate) still reports every violation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from loguru import logger

from tests.conftest import FIXTURES
from tests.support.mcp_client import call, mcp_client
from tests.support.mcp_raw import RawMcp

SEED001 = (FIXTURES / "workflows" / "seeds" / "seed001_full.yaml").read_text()
BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


@pytest.fixture
def warned() -> Iterator[list[dict[str, Any]]]:
    records: list[dict[str, Any]] = []
    sink_id = logger.add(lambda m: records.append(dict(m.record["extra"])), level="WARNING")
    yield records
    logger.remove(sink_id)


async def finished(url: str, run_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        for _ in range(400):
            run: dict[str, Any] = (await http.get(f"{url}/runs/{run_id}")).json()
            if run["status"] in ("succeeded", "failed", "cancelled"):
                return run
            await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


# A draft passed inline is model-composed: its POST (create_booking) needs the header
# (README "Safe by default"); what this file tests is which workflows of the draft run.
ALLOW_BOOKING = {"X-Allow-Unsafe-Paths": "create_booking"}


async def test_workflow_run_of_a_draft_runs_a_valid_workflow_beside_invalid_ones(
    server: str, warned: list[dict[str, Any]]
) -> None:
    async with mcp_client(server, headers=ALLOW_BOOKING) as client:
        started = await call(
            client, "workflow.run", content=SEED001, workflow_id="book_flight", inputs=BOOK
        )
        refused = await call(
            client,
            "workflow.run",
            content=SEED001,
            workflow_id="book_with_approval",
            inputs={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
        )
        checked = await call(client, "workflow.validate", content=SEED001)
    assert not started["is_error"], started
    left_out = {p["workflow"] for p in started["left_out"]}
    assert "book_with_approval" in left_out and "check_flight_status" in left_out
    assert "book_flight" not in left_out
    assert (await finished(server, started["run_id"]))["status"] == "succeeded"
    assert {w.get("workflow") for w in warned if w.get("tool") == "workflow.run"} == left_out
    assert refused["is_error"]
    paths = {v["path"].split(".")[1] for v in refused["violations"]}
    assert paths == {"book_with_approval"}  # only what stops it, not its siblings'
    assert checked["valid"] is False  # validation still reports the whole draft
    reported = {e["path"].split(".")[1] for e in checked["errors"]}
    assert left_out <= reported


async def test_workflow_execute_task_of_a_draft_runs_a_valid_workflow(server: str) -> None:
    async with RawMcp(server, headers=ALLOW_BOOKING) as mcp:
        answer = await mcp.request(
            "tools/call",
            {
                "name": "workflow.execute",
                "arguments": {"content": SEED001, "workflow_id": "book_flight", "inputs": BOOK},
                "task": {"ttl": 60000},
            },
        )
        assert "result" in answer, answer
        task_id = answer["result"]["task"]["taskId"]
        for _ in range(600):
            task = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
            if task["status"] in ("completed", "failed"):
                break
            await asyncio.sleep(0.05)
    assert task["status"] == "completed", task


async def test_rest_validation_still_reports_every_workflow(server: str) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{server}/workflows/validate", json={"content": SEED001})
    body = answer.json()
    assert answer.status_code == 200 and body["valid"] is False
    errors = {v["path"].split(".")[1] for v in body["violations"] if v["severity"] == "error"}
    assert {"check_flight_status", "book_with_approval"} <= errors
