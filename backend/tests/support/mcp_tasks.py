"""Helpers for MCP Tasks tests over raw JSON-RPC: create a task, poll it, wait for a condition."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.support.mcp_raw import RawMcp

BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
FLIGHT_2 = "FL-AMSBCN-20261201-2"


async def call_as_task(
    mcp: RawMcp,
    name: str,
    arguments: dict[str, Any],
    *,
    ttl: Any = 60000,
    progress_token: str | int | None = None,
) -> dict[str, Any]:
    """``tools/call`` with ``params.task``; the task of the ``CreateTaskResult``."""
    params: dict[str, Any] = {"name": name, "arguments": arguments, "task": {"ttl": ttl}}
    if progress_token is not None:
        params["_meta"] = {"progressToken": progress_token}
    answer = await mcp.request("tools/call", params)
    assert "result" in answer, answer
    task: dict[str, Any] = answer["result"]["task"]
    return task


async def poll(mcp: RawMcp, task_id: str, wanted: set[str]) -> dict[str, Any]:
    """``tasks/get`` until the task's status is one of ``wanted`` (bounded)."""
    for _ in range(600):
        task: dict[str, Any] = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
        if task["status"] in wanted:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {wanted}")


async def until(check: Callable[[], bool], what: str, *, tries: int = 400) -> None:
    """Wait (bounded) until ``check()`` holds."""
    for _ in range(tries):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")
