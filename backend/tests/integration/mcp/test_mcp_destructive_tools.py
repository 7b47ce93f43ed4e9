"""Destructive tools are safe by construction.

- ``workflow.purge_history`` needs an explicit scope (a workflow, an age, input keys, or
  ``all=true``); an empty call or an unknown key removes nothing.
- Every destructive tool says what it would remove (``dry_run``), and asks the user through
  elicitation when the client can: a decline changes nothing, a confirmation goes ahead, and
  the question names what will be removed. Other clients confirm with a token
  (``test_mcp_confirmation.py``).
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import mcp_types as types

from tests.support.mcp_client import call, confirmed_call, mcp_client

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def ended_runs(url: str, n: int, workflow: str = "book_flight") -> list[str]:
    ids = []
    for _ in range(n):
        started = httpx.post(f"{url}/workflows/{workflow}/runs", json={"params": PARAMS})
        ids.append(started.json()["run_id"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        statuses = {httpx.get(f"{url}/runs/{r}").json()["status"] for r in ids}
        if statuses <= {"succeeded", "failed", "cancelled"}:
            return ids
        time.sleep(0.1)
    raise AssertionError("runs did not end")


def total_runs(url: str) -> int:
    return int(httpx.get(f"{url}/runs").json()["total"])


async def test_purge_needs_a_scope_and_counts_before_removing(server: str) -> None:
    ids = ended_runs(server, 2)
    async with mcp_client(server) as client:  # no elicitation: nothing to ask
        empty = await call(client, "workflow.purge_history")
        unknown = await call(client, "workflow.purge_history", input_key=["a"])
        assert total_runs(server) == 2
        dry = await call(client, "workflow.purge_history", all=True, dry_run=True)
        none_match = await confirmed_call(
            client, "workflow.purge_history", input_keys=["no_such_param"]
        )
        assert total_runs(server) == 2
        by_keys = await confirmed_call(
            client, "workflow.purge_history", input_keys=["origin", "passenger"]
        )
    assert empty["is_error"] and empty["error_code"] == "INVALID_INPUT"
    assert "workflow_id, older_than_days, input_keys, all" in empty["violations"][0]["message"]
    assert unknown["is_error"] and {v["path"] for v in unknown["violations"]} >= {"input_key"}
    assert dry["would_remove_runs"] == 2 and dry["changed"] is False
    assert dry["summary"] == "Delete 2 ended run(s) and their events (book_flight: 2)."
    assert none_match["removed_runs"] == 0
    assert by_keys["removed_runs"] == 2 and by_keys["by_workflow"] == {"book_flight": 2}
    assert all(httpx.get(f"{server}/runs/{r}").status_code == 404 for r in ids)


async def test_a_declined_confirmation_removes_nothing_and_a_confirmed_one_does(
    server: str,
) -> None:
    ended_runs(server, 1)
    asked: list[types.ElicitRequestFormParams] = []
    answers = ["decline", "refuse-by-form", "accept"]

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        action = answers.pop(0)
        if action == "refuse-by-form":
            return types.ElicitResult(action="accept", content={"confirm": False})
        return types.ElicitResult(
            action=action,  # type: ignore[arg-type]
            content={"confirm": True} if action == "accept" else None,
        )

    async with mcp_client(server, elicitation_callback=answer) as client:
        declined = await call(client, "workflow.purge_history", workflow_id="book_flight")
        unticked = await call(client, "workflow.purge_history", workflow_id="book_flight")
        assert total_runs(server) == 1
        confirmed = await call(client, "workflow.purge_history", workflow_id="book_flight")
        dry = await call(client, "workflow.delete", workflow_id="book_flight", dry_run=True)
    assert declined["confirmed"] is False and declined["changed"] is False
    assert unticked["confirmed"] is False
    assert confirmed["removed_runs"] == 1 and total_runs(server) == 0
    assert len(asked) == 3  # a dry run asks nothing
    assert asked[0].message.startswith(
        "workflow.purge_history: Delete 1 ended run(s) and their events (book_flight: 1)."
    )
    assert asked[0].requested_schema["properties"]["confirm"]["type"] == "boolean"
    assert dry["dry_run"] is True and dry["workflow_id"] == "book_flight"
    assert dry["summary"].startswith("Delete the saved workflow 'book_flight': its entry is")
    assert httpx.get(f"{server}/workflows/book_flight").status_code == 200


async def test_cancel_and_delete_say_what_they_do_and_ask_first(server: str) -> None:
    started = httpx.post(
        f"{server}/workflows/book_with_approval/runs", json={"params": PARAMS}
    ).json()
    deadline = time.monotonic() + 30
    while httpx.get(f"{server}/runs/{started['run_id']}").json()["status"] != "waiting_input":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    asked: list[str] = []

    async def decline(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    async with mcp_client(server, elicitation_callback=decline) as client:
        kept = await call(client, "workflow.cancel", run_id=started["run_id"])
        not_deleted = await call(client, "workflow.delete", workflow_id="book_flight")
        missing = await call(client, "workflow.delete", workflow_id="no_such_workflow")
    assert kept["confirmed"] is False
    assert httpx.get(f"{server}/runs/{started['run_id']}").json()["status"] == "waiting_input"
    assert not_deleted["confirmed"] is False
    assert httpx.get(f"{server}/workflows/book_flight").status_code == 200
    assert missing["is_error"] and missing["category"] == "not_found"
    assert asked[0].startswith(
        f"workflow.cancel: Cancel run '{started['run_id']}' of workflow 'book_with_approval' "
        "(waiting_input)"
    )
    assert asked[1].startswith("workflow.delete: Delete the saved workflow 'book_flight'")
    assert len(asked) == 2  # nothing is asked about a workflow that does not exist

    async with mcp_client(server) as client:  # no elicitation: a preview, then the token acts
        cancelled = await confirmed_call(client, "workflow.cancel", run_id=started["run_id"])
        again = await call(client, "workflow.cancel", run_id=started["run_id"])
    assert cancelled["status"] == "cancelled"
    assert again["is_error"] and "already ended" in again["message"]
