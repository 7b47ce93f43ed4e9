"""A durable run a task follows ends failed when its client never answers the yield's form: the
failure is recorded first, then the journal's workflow is stopped, and nothing flips it back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, FLIGHT_2, call_as_task, poll
from tests.support.servers import serve


async def test_an_unanswered_yield_fails_a_durable_task_and_its_run(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml",
        seed_examples_from=EXAMPLES,
        durable_runs=True,
        executor_id="task-timeout-1",
        mcp_client_request_timeout_s=0.5,
    )

    async def too_late(request: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(1.5)
        return {"action": "accept", "content": {"selected_flight_id": FLIGHT_2}}

    with serve(create_app(settings), port=settings.port) as url:
        async with RawMcp(url, capabilities={"elicitation": {"form": {}}}) as mcp:
            task = await call_as_task(mcp, "w_book_with_approval", BOOK)
            await poll(mcp, task["taskId"], {"input_required"})
            result = await mcp.request(
                "tasks/result", {"taskId": task["taskId"]}, on_request=too_late
            )
            got = await poll(mcp, task["taskId"], {"failed", "cancelled", "completed"})
        async with httpx.AsyncClient() as http:
            run = (await http.get(f"{url}/runs/{task['taskId']}")).json()
            executor = run.get("executor") or {}
    assert result["result"]["structuredContent"]["error_code"] == "CLIENT_REQUEST_TIMEOUT"
    assert got["status"] == "failed"
    assert run["status"] == "failed" and "did not answer" in run["error"]["message"]
    assert executor["state"] == "finished", "the journal's workflow was stopped"
