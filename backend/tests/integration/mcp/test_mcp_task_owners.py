"""Tasks belong to who created them: without API_TOKEN the MCP session, with it the token's
holder. Another session cannot list, get, read the result of, or cancel a task: it gets the
same "no task" error as for an unknown id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.mcp_client import mcp_client
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, call_as_task, poll


def without_id(message: str, task_id: str) -> str:
    return message.replace(task_id, "<id>")


async def test_a_second_session_cannot_reach_the_first_sessions_task(server: str) -> None:
    async with RawMcp(server) as first:
        task = await call_as_task(first, "w_book_with_approval", BOOK)
        task_id = task["taskId"]
        await poll(first, task_id, {"input_required"})
        async with RawMcp(server) as second:
            listed = (await second.request("tasks/list"))["result"]["tasks"]
            answers = {
                method: await second.request(method, {"taskId": task_id})
                for method in ("tasks/get", "tasks/result", "tasks/cancel")
            }
            unknown = await second.request("tasks/get", {"taskId": "0" * 32})
        # the SDK client, as a third session, is refused the same way
        async with mcp_client(server) as client:
            sdk_errors = []
            for request in (
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)),
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)),
            ):
                with pytest.raises(MCPError) as refused:
                    await client.session.send_request(request, types.GetTaskResult)
                sdk_errors.append(refused.value)
            sdk_list = await client.session.send_request(
                types.ListTasksRequest(params=types.PaginatedRequestParams()),
                types.ListTasksResult,
            )
        mine = (await first.request("tasks/list"))["result"]["tasks"]
        still = (await first.request("tasks/get", {"taskId": task_id}))["result"]
        cancelled = (await first.request("tasks/cancel", {"taskId": task_id}))["result"]
    assert task_id not in {t["taskId"] for t in listed}
    assert task_id not in {t.task_id for t in sdk_list.tasks}
    expected = unknown["error"]
    for method, answer in answers.items():
        error = answer["error"]
        assert error["code"] == expected["code"] == -32602, method
        assert without_id(error["message"], task_id) == without_id(expected["message"], "0" * 32)
    for error in sdk_errors:
        assert error.code == -32602 and task_id in str(error)
        assert without_id(str(error), task_id) == without_id(expected["message"], "0" * 32)
    assert task_id in {t["taskId"] for t in mine}
    assert still["status"] == "input_required", "another session touched the task"
    assert cancelled["status"] == "cancelled"


async def test_with_an_api_token_tasks_belong_to_the_token_holder(
    start_server: Callable[..., str],
) -> None:
    url = start_server(api_token="tok-tasks-5d2e", enable_demo_api=True)
    auth = {"Authorization": "Bearer tok-tasks-5d2e"}
    async with RawMcp(url, headers=auth) as first:
        task = await call_as_task(first, "w_book_flight", BOOK)
        await poll(first, task["taskId"], {"completed"})
    async with RawMcp(url, headers=auth) as later:  # a new session of the same holder
        listed = (await later.request("tasks/list"))["result"]["tasks"]
        result: dict[str, Any] = (await later.request("tasks/result", {"taskId": task["taskId"]}))[
            "result"
        ]
    assert task["taskId"] in {t["taskId"] for t in listed}
    assert result["structuredContent"]["result"]["status"] == "reserved"
