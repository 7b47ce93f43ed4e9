"""A task's lifetime (MCP Tasks, 2025-11-25): the ttl asked is the ttl kept, a task still waiting
for input when its ttl runs out fails (TASK_EXPIRED, its run stopped), expired ended tasks are
purged (their runs stay), a cancel shows everywhere, and a client that never answers a
sampling or elicitation request fails the task after MCP_CLIENT_REQUEST_TIMEOUT_S."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import TEST_API_KEY
from tests.support.fake_llm import FakeLLM
from tests.support.mcp_client import mcp_client
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, FLIGHT_2, call_as_task, poll
from tests.support.servers import serve

RUN = "dynamic-tools/run"


async def test_the_ttl_asked_is_the_ttl_kept(start_server: Callable[..., str]) -> None:
    url = start_server(mcp_task_max_ttl_s=3600)
    async with RawMcp(url) as mcp:
        asked = await call_as_task(mcp, "w_book_flight", BOOK, ttl=123456)
        capped = await call_as_task(mcp, "w_book_flight", BOOK, ttl=10**12)
        got = await poll(mcp, asked["taskId"], {"completed"})
        listed = {t["taskId"]: t for t in (await mcp.request("tasks/list"))["result"]["tasks"]}
        capped_got = (await mcp.request("tasks/get", {"taskId": capped["taskId"]}))["result"]
        bad = [
            await mcp.request(
                "tools/call", {"name": "w_book_flight", "arguments": BOOK, "task": {"ttl": ttl}}
            )
            for ttl in (-1, 1.5, "soon")
        ]
        bad_cursor = await mcp.request("tasks/list", {"cursor": "bogus"})
    assert asked["ttl"] == got["ttl"] == listed[asked["taskId"]]["ttl"] == 123456
    assert capped["ttl"] == capped_got["ttl"] == listed[capped["taskId"]]["ttl"] == 3600 * 1000
    for answer in bad:
        assert answer["error"]["code"] == -32602 and "ttl" in answer["error"]["message"]
    assert bad_cursor["error"]["code"] == -32602


async def test_an_expired_task_is_purged_once_it_ended_and_its_run_is_kept(server: str) -> None:
    async with RawMcp(server) as mcp:
        done = await call_as_task(mcp, "w_book_flight", BOOK, ttl=1)
        waiting = await call_as_task(mcp, "w_book_with_approval", BOOK, ttl=1)
        # past its ttl while it waits for input: the task fails, and is kept to say why
        expired = await poll(mcp, waiting["taskId"], {"failed"})
        gone: dict[str, Any] = {}
        for _ in range(400):
            gone = await mcp.request("tasks/get", {"taskId": done["taskId"]})
            if "error" in gone:
                break
            await asyncio.sleep(0.05)
        listed = {t["taskId"] for t in (await mcp.request("tasks/list"))["result"]["tasks"]}
        result = await mcp.request("tasks/result", {"taskId": done["taskId"]})
        why = (await mcp.request("tasks/result", {"taskId": waiting["taskId"]}))["result"]
        cancel = await mcp.request("tasks/cancel", {"taskId": waiting["taskId"]})
    async with httpx.AsyncClient() as http:
        run = (await http.get(f"{server}/runs/{done['taskId']}")).json()
        stopped = (await http.get(f"{server}/runs/{waiting['taskId']}")).json()
    assert gone["error"]["code"] == -32602 and "expired" in gone["error"]["message"]
    assert result["error"]["code"] == -32602
    assert done["taskId"] not in listed and waiting["taskId"] in listed
    assert expired["statusMessage"].startswith("TASK_EXPIRED: the task's ttl (1 ms) ran out")
    assert "present_options" in expired["statusMessage"]
    assert why["isError"] and why["structuredContent"]["error_code"] == "TASK_EXPIRED"
    assert cancel["error"]["code"] == -32602, "it has ended: nothing to cancel"
    assert run["status"] == "succeeded", "the run stays in the run history"
    assert stopped["status"] == "failed", "the run that waited was stopped with its task"


async def test_a_cancelled_task_is_cancelled_everywhere(server: str) -> None:
    async with RawMcp(server) as mcp:
        task = await call_as_task(mcp, "w_book_with_approval", BOOK)
        await poll(mcp, task["taskId"], {"input_required"})
        cancelled = (await mcp.request("tasks/cancel", {"taskId": task["taskId"]}))["result"]
        got = (await mcp.request("tasks/get", {"taskId": task["taskId"]}))["result"]
        listed = {t["taskId"]: t for t in (await mcp.request("tasks/list"))["result"]["tasks"]}
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    async with httpx.AsyncClient() as http:
        run = (await http.get(f"{server}/runs/{task['taskId']}")).json()
    for view in (cancelled, got, listed[task["taskId"]]):
        assert view["status"] == "cancelled"
        assert view["_meta"][RUN]["progress_state"] == "canceled"
    assert run["status"] == "cancelled"
    assert result["isError"] and result["structuredContent"]["error_code"] == "WORKFLOW_CANCELLED"


async def test_a_drafting_task_cancelled_while_it_waits_for_the_client(server: str) -> None:
    # The client declares sampling but never opens tasks/result: the task waits for it.
    async with RawMcp(server, capabilities={"sampling": {}}) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", {"goal": "book a flight"})
        waiting = await poll(mcp, task["taskId"], {"input_required"})
        cancelled = (await mcp.request("tasks/cancel", {"taskId": task["taskId"]}))["result"]
        listed = {t["taskId"]: t for t in (await mcp.request("tasks/list"))["result"]["tasks"]}
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
        again = await mcp.request("tasks/cancel", {"taskId": task["taskId"]})
    assert "waiting for the client's sampling" in waiting["statusMessage"]
    for view in (cancelled, listed[task["taskId"]]):
        assert view["status"] == "cancelled"
        assert view["_meta"][RUN]["progress_state"] == "canceled"
        assert view["_meta"][RUN]["run_id"] is None
    assert result["isError"] and result["structuredContent"]["error_code"] == "TASK_CANCELLED"
    assert again["error"]["code"] == -32602


async def test_sampling_never_answered_fails_the_task(start_server: Callable[..., str]) -> None:
    url = start_server(mcp_client_request_timeout_s=0.5)
    async with RawMcp(url, capabilities={"sampling": {}}) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", {"goal": "book a flight"})
        failed = await poll(mcp, task["taskId"], {"failed"})
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    assert "CLIENT_REQUEST_TIMEOUT" in failed["statusMessage"]
    assert failed["_meta"][RUN]["progress_state"] == "failed"
    error = result["structuredContent"]
    assert error["error_code"] == "CLIENT_REQUEST_TIMEOUT" and "sampling" in error["message"]
    assert "MCP_CLIENT_REQUEST_TIMEOUT_S" in error["message"] and error["suggested_action"]


async def test_an_unanswered_yield_fails_the_task_and_its_run(
    start_server: Callable[..., str],
) -> None:
    url = start_server(mcp_client_request_timeout_s=0.5)
    asked: list[dict[str, Any]] = []

    async def too_late(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        await asyncio.sleep(1.5)  # past the server's timeout
        return {"action": "accept", "content": {"selected_flight_id": FLIGHT_2}}

    async with RawMcp(url, capabilities={"elicitation": {"form": {}}}) as mcp:
        task = await call_as_task(mcp, "w_book_with_approval", BOOK)
        await poll(mcp, task["taskId"], {"input_required"})
        result = await mcp.request("tasks/result", {"taskId": task["taskId"]}, on_request=too_late)
        got = (await mcp.request("tasks/get", {"taskId": task["taskId"]}))["result"]
    async with httpx.AsyncClient() as http:
        run = (await http.get(f"{url}/runs/{task['taskId']}")).json()
    assert asked and asked[0]["method"] == "elicitation/create"
    assert result["result"]["structuredContent"]["error_code"] == "CLIENT_REQUEST_TIMEOUT"
    assert got["status"] == "failed" and got["_meta"][RUN]["progress_state"] == "failed"
    assert run["status"] == "failed" and "did not answer" in run["error"]["message"]


async def test_a_task_drafting_when_the_server_stopped_fails_clearly(
    make_settings: Callable[..., Settings], fake_llm: FakeLLM, travel_root: Path
) -> None:
    settings = make_settings(
        api_token="tok-orphan-77",
        openai_base_url=fake_llm.base_url,
        openai_api_key=TEST_API_KEY,
    )
    auth = {"Authorization": "Bearer tok-orphan-77"}
    with serve(create_app(settings), port=settings.port) as url:
        # The client offers sampling but never opens tasks/result: the task waits for it.
        async with RawMcp(url, capabilities={"sampling": {}}, headers=auth) as mcp:
            task = await call_as_task(mcp, "workflow.author_and_run", {"goal": "book a flight"})
            await poll(mcp, task["taskId"], {"input_required"})
    with serve(create_app(settings), port=settings.port) as url:
        async with RawMcp(url, headers=auth) as mcp:
            failed = (await mcp.request("tasks/get", {"taskId": task["taskId"]}))["result"]
            result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    assert failed["status"] == "failed" and "TASK_INTERRUPTED" in failed["statusMessage"]
    assert failed["ttl"] == 60000
    assert result["structuredContent"]["error_code"] == "TASK_INTERRUPTED"
    assert "drafting" in result["structuredContent"]["message"]


async def test_outside_tasks_an_unanswered_form_leaves_the_run_waiting(
    start_server: Callable[..., str],
) -> None:
    url = start_server(mcp_client_request_timeout_s=0.5)

    async def slow(context: Any, params: Any) -> types.ElicitResult:
        await asyncio.sleep(1.5)  # past the server's timeout
        return types.ElicitResult(action="accept", content={"selected_flight_id": FLIGHT_2})

    async with mcp_client(url, elicitation_callback=slow) as client:
        result = await client.call_tool("w_book_with_approval", BOOK)
    waiting = result.structured_content or {}
    assert not result.is_error and waiting["status"] == "waiting_input"
    assert waiting["resume_with"] == "workflow.resume"
    async with httpx.AsyncClient() as http:
        run = (await http.get(f"{url}/runs/{waiting['run_id']}")).json()
    assert run["status"] == "waiting_input"
