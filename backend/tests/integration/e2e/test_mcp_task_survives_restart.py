"""An MCP task is a durable run: it survives kill -9 of the server. A task waiting for input is
found again by tasks/get after the restart, answered through tasks/result, and completes.

With API_TOKEN the task belongs to the token's holder, so a new session after the restart (the
old one died with the process) still reaches it: the owner is stored with the task, and its ttl
too."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES
from tests.support.mcp_raw import RawMcp
from tests.support.processes import server
from tests.support.servers import free_port

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


async def wait_for(mcp: RawMcp, task_id: str, wanted: set[str]) -> dict[str, Any]:
    for _ in range(600):
        task: dict[str, Any] = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
        if task["status"] in wanted:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {wanted}")


async def test_a_waiting_task_outlives_kill_9_and_completes(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "DATA_DIR": str(tmp_path / "data"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "registry/config.yaml"),
        "SEED_EXAMPLES_FROM": str(EXAMPLES),
        "DURABLE_RUNS": "true",
        "EXECUTOR_ID": "mcp-replica",
        "API_TOKEN": "tok-restart-81c4",
        "ENABLE_DEMO_API": "true",  # asked for: behind the token, the tools reach it in-process
    }
    auth = {"Authorization": "Bearer tok-restart-81c4"}
    log = tmp_path / "server.log"
    with server(port, env, log) as first:
        async with RawMcp(url, headers=auth) as mcp:
            created = await mcp.request(
                "tools/call",
                {"name": "w_book_with_approval", "arguments": PARAMS, "task": {"ttl": 987654}},
            )
            task_id = created["result"]["task"]["taskId"]
            await wait_for(mcp, task_id, {"input_required"})
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"selected_flight_id": "FL-AMSBCN-20261201-1"}}

    with server(port, env, log):
        async with RawMcp(url, capabilities={"elicitation": {"form": {}}}, headers=auth) as mcp:
            listed = (await mcp.request("tasks/list"))["result"]["tasks"]
            again = await wait_for(mcp, task_id, {"input_required"})
            result = await mcp.request("tasks/result", {"taskId": task_id}, on_request=answer)
            done = await wait_for(mcp, task_id, {"completed", "failed"})
    assert task_id in {t["taskId"] for t in listed}
    assert again["ttl"] == 987654
    assert again["_meta"]["dynamic-tools/run"]["current_step"] == "present_options"
    assert result["result"]["structuredContent"]["status"] == "succeeded", result
    assert done["status"] == "completed"
