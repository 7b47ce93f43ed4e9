"""One script, the same behaviour: the ``mcp`` SDK client in its default mode (2026-07-28) and in
legacy mode (2025-11-25), over HTTP and over stdio.

The script covers what differed between the revisions before: a task-required tool run as a task
(through the Tasks extension on 2026-07-28, ``params.task`` + ``tasks/result`` on 2025-11-25,
both via :func:`dynamic_tools.mcp.tasks.client.call_task`), a yield answered through the client's
elicitation callback (inside a task and in a ``w_*`` call), a declined yield, a destructive tool
that asks first (declined: nothing changes; accepted: it acts), and the error payloads of a bad
call, an unknown tool and an unknown run. Every assertion is the same for every client.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from dynamic_tools.mcp.tasks import TasksExtension, call_task
from tests.integration.mcp.test_mcp_stdio import stdio_params
from tests.support.mcp_client import LEGACY, MODERN, error_payload, mcp_client
from tests.support.mcp_tasks import BOOK, FLIGHT_2

CHEAPEST = "find_cheapest_across_dates"  # no other workflow calls it
PAYLOAD = {"error_code", "category", "message", "context", "retryable", "suggested_action"}


class User:
    """Answers the server's elicitations as a person would, and remembers what was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.decline_next = False

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        if self.decline_next:
            self.decline_next = False
            return types.ElicitResult(action="decline")
        fields = set(params.requested_schema.get("properties") or {})
        if "confirm" in fields:
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="accept", content={"selected_flight_id": FLIGHT_2})


def payload(result: types.CallToolResult) -> dict[str, Any]:
    data = dict(result.structured_content or error_payload(result) or {})
    data["is_error"] = bool(result.is_error)
    return data


async def script(client: Client, user: User) -> dict[str, Any]:
    """What every client does; what it saw."""
    seen: dict[str, Any] = {}
    # a task-required tool, run as a task to its end
    seen["task"] = payload(
        await call_task(client, "workflow.execute", {"workflow_id": "book_flight", "inputs": BOOK})
    )
    # a yield inside a task, answered through the elicitation callback
    seen["task_yield"] = payload(
        await call_task(
            client, "workflow.execute", {"workflow_id": "book_with_approval", "inputs": BOOK}
        )
    )
    # a yield in a w_* call (an elicitation on 2025-11-25, an InputRequiredResult on 2026-07-28)
    seen["inline_yield"] = payload(await client.call_tool("w_book_with_approval", BOOK))
    # the user declines the question: the run is cancelled
    user.decline_next = True
    seen["declined"] = payload(await client.call_tool("w_book_with_approval", BOOK))
    # a destructive tool asks first: declined, nothing changes; accepted, it acts
    user.decline_next = True
    seen["delete_declined"] = payload(
        await client.call_tool("workflow.delete", {"workflow_id": CHEAPEST})
    )
    seen["still_there"] = payload(await client.call_tool("workflow.get", {"workflow_id": CHEAPEST}))
    seen["deleted"] = payload(await client.call_tool("workflow.delete", {"workflow_id": CHEAPEST}))
    seen["gone"] = payload(await client.call_tool("workflow.get", {"workflow_id": CHEAPEST}))
    # errors
    seen["bad_call"] = payload(await client.call_tool("workflow.get", {}))
    seen["unknown_run"] = payload(
        await client.call_tool("workflow.resume", {"run_id": "no-such-run", "values": {}})
    )
    with pytest.raises(MCPError) as unknown:
        await client.call_tool("no_such_tool", {})
    seen["unknown_tool"] = unknown.value.error
    return seen


def check(seen: dict[str, Any], user: User, where: str) -> None:
    """The same expectations for every client."""
    for step in ("task", "task_yield", "inline_yield"):
        assert not seen[step]["is_error"], (where, step, seen[step])
        assert seen[step]["status"] == "succeeded", (where, step, seen[step])
    assert seen["declined"]["is_error"], where
    assert seen["declined"]["error_code"] == "WORKFLOW_CANCELLED", (where, seen["declined"])
    assert seen["delete_declined"]["confirmed"] is False, (where, seen["delete_declined"])
    assert seen["delete_declined"]["changed"] is False, where
    assert not seen["still_there"]["is_error"], where
    assert not seen["deleted"]["is_error"], (where, seen["deleted"])
    assert seen["gone"]["error_code"] == "NOT_FOUND", (where, seen["gone"])
    assert seen["gone"]["context"]["workflow_id"] == CHEAPEST, where
    bad = seen["bad_call"]
    assert bad["error_code"] == "INVALID_INPUT" and set(bad) >= PAYLOAD, (where, bad)
    assert all(v.get("rule") for v in bad["violations"]), where
    assert seen["unknown_run"]["error_code"] == "NOT_FOUND", (where, seen["unknown_run"])
    assert seen["unknown_run"]["context"]["run_id"] == "no-such-run", where
    unknown = seen["unknown_tool"]
    assert unknown.code == -32602 and set(unknown.data) >= PAYLOAD, (where, unknown)
    asked_for = ["confirm" if "Delete the saved workflow" in m else "flight" for m in user.asked]
    # the task's yield, the w_* yield, the declined yield, the declined and the accepted delete
    assert asked_for == ["flight", "flight", "flight", "confirm", "confirm"], (where, user.asked)


async def run_and_check(client: Client, user: User, mode: str, transport: str) -> None:
    """The script with ``client``, on the revision ``mode`` asks for, and the same checks."""
    async with client:
        version = client.protocol_version
        seen = await script(client, user)
    assert version == ("2026-07-28" if mode == MODERN else "2025-11-25")
    check(seen, user, f"{transport} {version}")


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_over_http_both_revisions_behave_the_same(server: str, mode: str) -> None:
    user = User()
    client = mcp_client(server, mode=mode, extensions=[TasksExtension()], elicitation_callback=user)
    await run_and_check(client, user, mode, "http")


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_over_stdio_both_revisions_behave_the_same(
    travel_root: Path, tmp_path: Path, mode: str
) -> None:
    params = stdio_params(travel_root, tmp_path)
    if os.environ.get("PYTHONPATH"):  # the code under test, when it is not the installed one
        params.env = {**(params.env or {}), "PYTHONPATH": os.environ["PYTHONPATH"]}
    user = User()
    client = Client(params, mode=mode, extensions=[TasksExtension()], elicitation_callback=user)
    await run_and_check(client, user, mode, "stdio")
