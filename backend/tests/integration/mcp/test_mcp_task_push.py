"""What a task pushes (MCP Tasks, 2025-11-25): notifications/tasks/status on every status
change and notifications/progress per step with the progressToken of the creating call, on the
session's GET stream, although the tools/call was answered at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, FLIGHT_2, call_as_task, poll, until
from tests.support.servers import serve


async def test_a_task_pushes_each_status_change_and_a_progress_per_step(server: str) -> None:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"selected_flight_id": FLIGHT_2}}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        await mcp.listen()
        task = await call_as_task(mcp, "w_book_with_approval", BOOK, progress_token="tok-1")
        task_id = task["taskId"]
        await poll(mcp, task_id, {"input_required"})
        await mcp.request("tasks/result", {"taskId": task_id}, on_request=answer)
        final = await poll(mcp, task_id, {"completed"})

        def statuses() -> list[str]:
            return [
                n["status"]
                for n in mcp.notifications("notifications/tasks/status")
                if n["taskId"] == task_id
            ]

        await until(lambda: "completed" in statuses(), "the completed status notification")
        progress = [
            n for n in mcp.notifications("notifications/progress") if n["progressToken"] == "tok-1"
        ]
    assert task["status"] == "working"
    assert statuses() == ["input_required", "working", "completed"]
    last = mcp.notifications("notifications/tasks/status")[-1]
    assert last["ttl"] == 60000 and last["createdAt"] == final["createdAt"]
    assert last["_meta"]["dynamic-tools/run"]["progress_state"] == "succeeded"
    assert progress, "no progress notification for the task's steps"
    counts = [p["progress"] for p in progress]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert all(
        p["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id} for p in progress
    )
    assert any(p["message"].startswith("present_options") for p in progress)


async def test_pushing_stops_when_the_session_closes(
    make_settings: Callable[..., Settings], travel_root: Path
) -> None:
    settings = make_settings()
    app = create_app(settings)
    tasks = app.state.mcp.endpoint.tasks
    with serve(app, port=settings.port) as url:
        async with RawMcp(url) as mcp:
            task = await call_as_task(mcp, "w_book_with_approval", BOOK)
            await poll(mcp, task["taskId"], {"input_required"})
            assert tasks.pushing == 1
        await until(lambda: tasks.pushing == 0, "the pusher to stop with its session")
        async with httpx.AsyncClient() as http:  # the run itself goes on waiting
            run = (await http.get(f"{url}/runs/{task['taskId']}")).json()
    assert run["status"] == "waiting_input"
