"""MCP Tasks (2025-11-25) over raw JSON-RPC: a task is a durable run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from tests.support.documents import draft
from tests.support.fake_llm import FakeLLM, text
from tests.support.mcp_raw import RawMcp

BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
BROKEN = "```yaml\n" + draft("seats_for_cheapest_broken") + "```"


async def call_as_task(mcp: RawMcp, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = await mcp.request(
        "tools/call", {"name": name, "arguments": arguments, "task": {"ttl": 60000}}
    )
    assert "result" in answer, answer
    task: dict[str, Any] = answer["result"]["task"]
    return task


async def poll(mcp: RawMcp, task_id: str, wanted: set[str]) -> dict[str, Any]:
    for _ in range(600):
        task: dict[str, Any] = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
        if task["status"] in wanted:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {wanted}")


async def test_capability_and_task_support_are_announced(server: str) -> None:
    async with RawMcp(server) as mcp:
        tools = {t["name"]: t for t in (await mcp.request("tools/list"))["result"]["tools"]}
    assert mcp.server_capabilities["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    assert tools["w_book_flight"]["execution"] == {"taskSupport": "optional"}
    assert tools["workflow.execute"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["search_flights"]


async def test_a_workflow_runs_as_a_task_and_returns_its_result(server: str) -> None:
    async with RawMcp(server) as mcp:
        task = await call_as_task(mcp, "w_book_flight", BOOK)
        assert task["status"] == "working" and task["ttl"] == 60000 and task["pollInterval"]
        done = await poll(mcp, task["taskId"], {"completed", "failed"})
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
        listed = (await mcp.request("tasks/list"))["result"]["tasks"]
    assert done["status"] == "completed"
    run = done["_meta"]["dynamic-tools/run"]
    assert run["run_id"] == task["taskId"] and run["progress_state"] == "succeeded"
    assert result["structuredContent"]["result"]["status"] == "reserved"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert task["taskId"] in {t["taskId"] for t in listed}


async def test_a_yield_is_input_required_and_answered_through_tasks_result(server: str) -> None:
    asked: list[dict[str, Any]] = []

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"selected_flight_id": "FL-AMSBCN-20261201-2"}}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        task = await call_as_task(mcp, "w_book_with_approval", BOOK)
        waiting = await poll(mcp, task["taskId"], {"input_required"})
        assert "waiting for input at 'present_options'" in waiting["statusMessage"]
        assert waiting["_meta"]["dynamic-tools/run"]["current_step"] == "present_options"
        result = await mcp.request("tasks/result", {"taskId": task["taskId"]}, on_request=answer)
        final = (await mcp.request("tasks/get", {"taskId": task["taskId"]}))["result"]
    assert asked and asked[0]["method"] == "elicitation/create"
    related = asked[0]["params"]["_meta"]["io.modelcontextprotocol/related-task"]
    assert related == {"taskId": task["taskId"]}
    assert result["result"]["structuredContent"]["status"] == "succeeded"
    assert final["status"] == "completed"


async def test_cancel_a_task_and_the_rules_for_ended_tasks(server: str) -> None:
    async with RawMcp(server) as mcp:
        task = await call_as_task(mcp, "w_book_with_approval", BOOK)
        await poll(mcp, task["taskId"], {"input_required"})
        cancelled = (await mcp.request("tasks/cancel", {"taskId": task["taskId"]}))["result"]
        again = await mcp.request("tasks/cancel", {"taskId": task["taskId"]})
        unknown = await mcp.request("tasks/get", {"taskId": "nope"})
    assert cancelled["status"] == "cancelled"
    assert again["error"]["code"] == -32602 and "already ended" in again["error"]["message"]
    assert unknown["error"]["code"] == -32602


async def test_task_required_tools_refuse_synchronous_calls(server: str) -> None:
    async with RawMcp(server) as mcp:
        answer = await mcp.request(
            "tools/call", {"name": "workflow.execute", "arguments": {"workflow_id": "book_flight"}}
        )
        forbidden = await mcp.request(
            "tools/call",
            {"name": "search_flights", "arguments": {}, "task": {}},
        )
    result = answer["result"]
    assert result["isError"] is True
    error = result["structuredContent"]
    assert error["error_code"] == "TASK_CAPABILITY_REQUIRED" and error["retryable"] is False
    assert error["category"] == "execution" and error["suggested_action"]
    assert forbidden["error"]["code"] == -32602 and "taskSupport" in forbidden["error"]["message"]


async def test_author_and_run_from_a_sentence_to_a_finished_run(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        text(BROKEN),  # the first draft names a tool that does not exist
        text(BROKEN.replace("call: check_seats", "call: check_availability")),  # the repair
    )
    async with RawMcp(server) as mcp:
        task = await call_as_task(
            mcp,
            "workflow.author_and_run",
            {
                "goal": "check the seats of the first flight of a day",
                "inputs": {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
            },
        )
        assert task["taskId"].startswith("task-")
        done = await poll(mcp, task["taskId"], {"completed", "failed"})
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
        saved = (
            await mcp.request(
                "tools/call",
                {"name": "workflow.get", "arguments": {"workflow_id": "seats_for_cheapest"}},
            )
        )["result"]
    assert done["status"] == "completed", done
    assert result["structuredContent"]["result"]["seats"] >= 1
    assert "check_availability" in saved["structuredContent"]["content"]
    repair_prompt = fake_llm.requests[1]["messages"][0]["content"]
    assert "check_seats" in repair_prompt and "## Violations" in repair_prompt


async def test_author_and_run_without_any_model_fails_clearly(
    start_server: Callable[..., str],
) -> None:
    url = start_server(openai_base_url=None, openai_api_key=None)
    async with RawMcp(url) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", {"goal": "anything"})
        failed = await poll(mcp, task["taskId"], {"failed"})
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    assert failed["status"] == "failed"
    assert result["isError"] is True
    assert "no model to draft with" in result["structuredContent"]["message"]


async def test_tasks_result_blocks_until_a_yield_is_answered_elsewhere(server: str) -> None:
    async with RawMcp(server) as mcp:  # this client cannot answer forms
        task = await call_as_task(mcp, "w_book_with_approval", BOOK)
        await poll(mcp, task["taskId"], {"input_required"})
        pending = asyncio.create_task(mcp.request("tasks/result", {"taskId": task["taskId"]}))
        await asyncio.sleep(0.3)
        assert not pending.done(), "tasks/result answered before the task ended"
        async with httpx.AsyncClient() as http:  # someone answers through the REST API
            answered = await http.post(
                f"{server}/runs/{task['taskId']}/resume",
                json={"values": {"selected_flight_id": "FL-AMSBCN-20261201-2"}},
            )
        assert answered.status_code in (200, 202), answered.text
        result = (await asyncio.wait_for(pending, 30))["result"]
    assert result["structuredContent"]["status"] == "succeeded"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
