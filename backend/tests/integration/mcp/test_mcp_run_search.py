"""The run search over MCP with the real SDK client: ``workflow.list_runs`` and
``workflow.run_stats`` take ``GET /runs``'s filters; ``workflow.cancel_runs`` and
``workflow.redrive_runs`` preview how many runs they act on and act once confirmed, each run
reported; a principal finds and acts on their own runs only."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.support.mcp_client import MODERN, call, confirmed_call, mcp_client

TOKEN = "admin-token-for-mcp-search-5d1"
PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def started(url: str, workflow: str, passenger: str, headers: dict[str, str]) -> str:
    answer = httpx.post(
        f"{url}/workflows/{workflow}/runs",
        json={"params": {**PARAMS, "passenger": passenger}},
        headers=headers,
    )
    assert answer.status_code == 202, answer.text
    run_id: str = answer.json()["run_id"]
    return run_id


def settled(url: str, run_id: str, headers: dict[str, str]) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status: str = httpx.get(f"{url}/runs/{run_id}", headers=headers).json()["status"]
        if status in ("succeeded", "failed", "cancelled", "waiting_input"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not settle")


async def test_runs_are_found_counted_cancelled_and_redriven_over_mcp(server: str) -> None:
    url, admin = server, {}
    done = [started(url, "book_flight", "Ada", admin) for _ in range(2)]
    held = [started(url, "book_with_approval", "Bob", admin) for _ in range(2)]
    assert {settled(url, r, admin) for r in done} == {"succeeded"}
    assert {settled(url, r, admin) for r in held} == {"waiting_input"}

    async with mcp_client(url) as client:
        bob = await call(client, "workflow.list_runs", params={"passenger": "Bob"})
        ended = await call(client, "workflow.list_runs", status=["succeeded"], limit=1)
        rest = await call(
            client, "workflow.list_runs", status="succeeded", cursor=ended["next_cursor"]
        )
        bad = await call(client, "workflow.list_runs", status=["done"])
        stats = await call(client, "workflow.run_stats", workflow_id="book_flight")
        preview = await call(
            client, "workflow.cancel_runs", params={"passenger": "Bob"}, dry_run=True
        )
        cancelled = await confirmed_call(
            client, "workflow.cancel_runs", params={"passenger": "Bob"}, run_ids=[held[0]]
        )
        redriven = await confirmed_call(client, "workflow.redrive_runs", run_ids=[held[0], done[0]])
    assert sorted(r["run_id"] for r in bob["runs"]) == sorted(held)
    assert len(ended["runs"]) == 1 and ended["total"] == 2 and ended["next_cursor"]
    assert [r["run_id"] for r in ended["runs"] + rest["runs"]] == [done[1], done[0]]
    assert bad["is_error"] and bad["violations"][0]["path"] == "arguments.status"
    assert stats["total"] == 2 and stats["by_status"]["succeeded"] == 2
    assert preview["matched"] == 2 and preview["changed"] is False
    assert preview["summary"].startswith("Cancel 2 run(s) that have not ended")
    assert cancelled["matched"] == 1 and cancelled["counts"] == {"cancelled": 1}, cancelled
    assert cancelled["results"][0]["run_id"] == held[0]
    assert settled(url, held[1], admin) == "waiting_input"
    outcomes = {r["run_id"]: r for r in redriven["results"]}
    assert outcomes[held[0]]["outcome"] == "redriven" and outcomes[held[0]]["new_run_id"]
    assert outcomes[done[0]]["outcome"] == "skipped"


async def test_a_principal_finds_and_acts_on_their_own_runs_only_over_mcp(
    start_server: Callable[..., str],
) -> None:
    url = start_server(api_token=TOKEN)
    admin = {"Authorization": f"Bearer {TOKEN}"}
    key = httpx.post(
        f"{url}/keys", json={"name": "ann", "scopes": ["read", "run"]}, headers=admin
    ).json()["key"]
    ann = {"Authorization": f"Bearer {key}"}
    theirs = started(url, "book_flight", "Bob", admin)
    hers = started(url, "book_flight", "Bob", ann)
    settled(url, theirs, admin)
    settled(url, hers, admin)
    async with mcp_client(url, headers=ann, mode=MODERN) as client:
        mine = await call(client, "workflow.list_runs", params={"passenger": "Bob"}, owner="admin")
        counted = await call(client, "workflow.run_stats")
        acted = await confirmed_call(client, "workflow.cancel_runs", run_ids=[theirs, hers])
    assert [r["run_id"] for r in mine["runs"]] == [hers]
    assert counted["total"] == 1
    by_id: dict[str, Any] = {r["run_id"]: r for r in acted.get("results", [])}
    assert by_id[theirs]["outcome"] == "skipped", acted
    assert "does not exist" in by_id[theirs]["reason"]
    assert by_id[hers]["outcome"] == "skipped" and "ended" in by_id[hers]["reason"]
