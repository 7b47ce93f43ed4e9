"""MCP Tasks on 2026-07-28 through the ``io.modelcontextprotocol/tasks`` extension.

The probe that found the gap: with the ``mcp`` SDK client in its default mode (2026-07-28),
``workflow.execute``, ``workflow.author_and_run`` and ``workflow.repair_and_rerun`` could not be
called at all. Now ``server/discover`` advertises the extension, a client that declares it gets
a task handle (``resultType: "task"``) and follows it with ``tasks/get`` / ``tasks/update`` /
``tasks/cancel`` over the same durable runs and owners as 2025-11-25; one that does not gets
``-32021``. Raw JSON-RPC and the SDK client (with :mod:`dynamic_tools.mcp.tasks.client`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from dynamic_tools.mcp.tasks import TasksExtension
from tests.support.documents import draft
from tests.support.fake_llm import FakeLLM, text
from tests.support.mcp_client import MODERN, error_payload, mcp_client
from tests.support.mcp_raw import TASKS_EXTENSION, RawMcp, RawModern
from tests.support.mcp_tasks import BOOK, FLIGHT_2

RUN = "dynamic-tools/run"
ADMIN_TOKEN = "admin-token-for-tasks-extension-tests"
SEATS = "```yaml\n" + draft("seats_for_cheapest") + "```"
TRIP = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
SEAT_CHECK = draft("seat_check")
#: the repair gives the param a default, a flight that exists
REPAIRED = SEAT_CHECK.replace(
    "flight_id: {type: str, required: true}", f"flight_id: {{type: str, default: {FLIGHT_2}}}"
)


async def execute(mcp: RawModern, workflow_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """``workflow.execute`` from a client declaring the extension: the task handle."""
    answer = await mcp.request(
        "tools/call",
        {"name": "workflow.execute", "arguments": {"workflow_id": workflow_id, "inputs": inputs}},
    )
    assert "result" in answer, answer
    handle: dict[str, Any] = answer["result"]
    return handle


async def poll(mcp: RawModern, task_id: str, wanted: set[str]) -> dict[str, Any]:
    """``tasks/get`` until the task's status is one of ``wanted`` (bounded)."""
    for _ in range(600):
        answer = await mcp.request("tasks/get", {"taskId": task_id})
        assert "result" in answer, answer
        task: dict[str, Any] = answer["result"]
        if task["status"] in wanted:
            return task
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {wanted}")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_declaring_client_gets_a_task_and_polls_it_to_its_result(server: str) -> None:
    async with RawModern(server) as mcp:
        discovered = (await mcp.request("server/discover"))["result"]
        handle = await execute(mcp, "book_flight", BOOK)
        done = await poll(mcp, handle["taskId"], {"completed", "failed"})
        listed = await mcp.request("tasks/list")
        result = await mcp.request("tasks/result", {"taskId": handle["taskId"]})
        unknown = await mcp.request("tasks/get", {"taskId": "no-such-task"})
    assert discovered["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}
    assert "tasks" not in discovered["capabilities"]  # the core capability is 2025-11-25's
    assert handle["resultType"] == "task" and handle["status"] in ("working", "completed")
    assert handle["ttlMs"] > 0 and handle["pollIntervalMs"] > 0
    assert {"createdAt", "lastUpdatedAt"} <= set(handle)
    assert done["status"] == "completed" and done["resultType"] == "complete"
    assert done["result"]["isError"] is False
    booked = done["result"]["structuredContent"]
    assert booked["status"] == "succeeded" and booked["result"]["status"] == "reserved"
    steps = done["_meta"][RUN]
    assert steps["run_id"] == handle["taskId"]
    assert steps["steps_done"] == steps["steps_total"] == 6
    assert listed["error"]["code"] == -32601 and result["error"]["code"] == -32601
    assert unknown["error"]["code"] == -32602


async def test_a_client_without_the_extension_is_told_what_it_lacks(server: str) -> None:
    async with RawModern(server) as declaring:
        handle = await execute(declaring, "book_flight", BOOK)
    async with RawModern(server, tasks=False) as plain:
        refused = await plain.request(
            "tools/call",
            {"name": "workflow.execute", "arguments": {"workflow_id": "book_flight"}},
        )
        polled = await plain.request("tasks/get", {"taskId": handle["taskId"]})
        inline = await plain.request("tools/call", {"name": "w_book_flight", "arguments": BOOK})
    for error in (refused["error"], polled["error"]):
        assert error["code"] == -32021
        assert error["data"]["requiredCapabilities"] == {"extensions": {TASKS_EXTENSION: {}}}
        assert error["data"]["error_code"] == "TASK_CAPABILITY_REQUIRED"
        assert error["data"]["suggested_action"]
    assert refused["error"]["data"]["context"] == {"tool": "workflow.execute"}
    assert inline["result"]["structuredContent"]["status"] == "succeeded"  # no task: inline


async def test_a_yield_is_an_input_request_answered_with_tasks_update(server: str) -> None:
    async with RawModern(server) as mcp:
        handle = await execute(mcp, "book_with_approval", BOOK)
        waiting = await poll(mcp, handle["taskId"], {"input_required"})
        [(key, request)] = waiting["inputRequests"].items()
        wrong = await mcp.request(
            "tasks/update",
            {
                "taskId": handle["taskId"],
                "inputResponses": {key: {"action": "accept", "content": {"seats": 2}}},
            },
        )
        still = await poll(mcp, handle["taskId"], {"input_required"})
        ignored = await mcp.request(
            "tasks/update",
            {"taskId": handle["taskId"], "inputResponses": {"no-such-key": {"action": "accept"}}},
        )
        answered = await mcp.request(
            "tasks/update",
            {
                "taskId": handle["taskId"],
                "inputResponses": {
                    key: {"action": "accept", "content": {"selected_flight_id": FLIGHT_2}}
                },
            },
        )
        done = await poll(mcp, handle["taskId"], {"completed", "failed", "cancelled"})
    async with httpx.AsyncClient() as http:
        run = (await http.get(f"{server}/runs/{handle['taskId']}")).json()
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    assert "selected_flight_id" in request["params"]["requestedSchema"]["properties"]
    assert waiting["_meta"][RUN]["current_step"] == "present_options"
    assert wrong["error"]["code"] == -32602, wrong
    assert wrong["error"]["data"]["violations"], wrong
    assert list(still["inputRequests"]) == [key], "a rejected answer leaves the request open"
    assert (
        ignored["result"] == {"resultType": "complete"}
        or ignored["result"].get("resultType") == "complete"
    ), ignored
    assert answered["result"]["resultType"] == "complete"
    assert done["status"] == "completed", done
    assert done["result"]["structuredContent"]["status"] == "succeeded"
    assert run["nodes"]["book"]["input"]["flight_id"] == FLIGHT_2, run["nodes"]["book"]


async def test_decline_cancels_the_run_and_tasks_cancel_acknowledges(server: str) -> None:
    async with RawModern(server) as mcp:
        declined = await execute(mcp, "book_with_approval", BOOK)
        asked = await poll(mcp, declined["taskId"], {"input_required"})
        [key] = asked["inputRequests"]
        await mcp.request(
            "tasks/update",
            {"taskId": declined["taskId"], "inputResponses": {key: {"action": "decline"}}},
        )
        after_decline = await poll(mcp, declined["taskId"], {"cancelled", "completed"})
        other = await execute(mcp, "book_with_approval", BOOK)
        await poll(mcp, other["taskId"], {"input_required"})
        ack = await mcp.request("tasks/cancel", {"taskId": other["taskId"]})
        cancelled = await poll(mcp, other["taskId"], {"cancelled"})
        again = await mcp.request("tasks/cancel", {"taskId": other["taskId"]})
        unknown = await mcp.request("tasks/cancel", {"taskId": "no-such-task"})
    async with httpx.AsyncClient() as http:
        runs = [
            (await http.get(f"{server}/runs/{t['taskId']}")).json()["status"]
            for t in (declined, other)
        ]
    assert after_decline["status"] == "cancelled", after_decline
    assert ack["result"] == {"resultType": "complete"} or set(ack["result"]) <= {
        "resultType",
        "_meta",
    }, ack
    assert cancelled["_meta"][RUN]["progress_state"] == "canceled"
    assert "result" in again and unknown["error"]["code"] == -32602
    assert runs == ["cancelled", "cancelled"]


async def test_another_principal_is_answered_as_for_an_unknown_task(
    start_server: Callable[..., str],
) -> None:
    url = start_server(api_token=ADMIN_TOKEN, enable_demo_api=True)
    keys = []
    for name in ("ops-a", "ops-b"):
        made = httpx.post(
            f"{url}/keys",
            json={"name": name, "scopes": ["read", "run"]},
            headers=bearer(ADMIN_TOKEN),
        )
        assert made.status_code == 201, made.text
        keys.append(bearer(str(made.json()["key"])))
    async with RawModern(url, headers=keys[0]) as alice, RawModern(url, headers=keys[1]) as bob:
        handle = await execute(alice, "book_with_approval", BOOK)
        waiting = await poll(alice, handle["taskId"], {"input_required"})
        [key] = waiting["inputRequests"]
        answers = [
            await bob.request("tasks/get", {"taskId": handle["taskId"]}),
            await bob.request(
                "tasks/update",
                {
                    "taskId": handle["taskId"],
                    "inputResponses": {key: {"action": "accept", "content": {}}},
                },
            ),
            await bob.request("tasks/cancel", {"taskId": handle["taskId"]}),
        ]
        unknown = await bob.request("tasks/get", {"taskId": "no-such-task"})
        mine = await poll(alice, handle["taskId"], {"input_required"})
    for answer in answers:
        assert answer["error"]["code"] == -32602, answer
        assert answer["error"]["message"].replace(handle["taskId"], "X") == unknown["error"][
            "message"
        ].replace("no-such-task", "X")
    assert mine["inputRequests"] == waiting["inputRequests"], "bob changed nothing"


async def test_a_task_left_waiting_past_its_ttl_fails_on_both_revisions(
    start_server: Callable[..., str],
) -> None:
    url = start_server(mcp_task_max_ttl_s=1)
    async with RawModern(url) as modern, RawMcp(url) as legacy:
        handle = await execute(modern, "book_with_approval", BOOK)
        created = await legacy.request(
            "tools/call",
            {
                "name": "workflow.execute",
                "arguments": {"workflow_id": "book_with_approval", "inputs": BOOK},
                "task": {"ttl": 1000},
            },
        )
        legacy_id = created["result"]["task"]["taskId"]
        failed = await poll(modern, handle["taskId"], {"failed"})
        legacy_failed: dict[str, Any] = {}
        for _ in range(600):
            legacy_failed = (await legacy.request("tasks/get", {"taskId": legacy_id}))["result"]
            if legacy_failed["status"] != "input_required" and legacy_failed["status"] != "working":
                break
            await asyncio.sleep(0.05)
        result = (await legacy.request("tasks/result", {"taskId": legacy_id}))["result"]
    async with httpx.AsyncClient() as http:
        runs = [
            (await http.get(f"{url}/runs/{run_id}")).json()["status"]
            for run_id in (handle["taskId"], legacy_id)
        ]
    assert failed["error"]["data"]["error_code"] == "TASK_EXPIRED", failed
    assert "present_options" in failed["error"]["message"]
    assert failed["statusMessage"].startswith("TASK_EXPIRED")
    assert legacy_failed["status"] == "failed", legacy_failed
    assert legacy_failed["statusMessage"].startswith("TASK_EXPIRED")
    assert result["isError"] and result["structuredContent"]["error_code"] == "TASK_EXPIRED"
    assert runs == ["failed", "failed"]


async def test_the_sdk_client_with_the_extension_calls_the_three_task_tools(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text(SEATS), text("```yaml\n" + REPAIRED + "```"))
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        if "selected_flight_id" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"selected_flight_id": FLIGHT_2})
        return types.ElicitResult(action="accept", content=TRIP)

    async with mcp_client(
        server, mode=MODERN, extensions=[TasksExtension()], elicitation_callback=elicit
    ) as client:
        version = client.protocol_version
        executed = await client.call_tool(
            "workflow.execute", {"workflow_id": "book_with_approval", "inputs": BOOK}
        )
        authored = await client.call_tool(
            "workflow.author_and_run", {"goal": "check the seats of the first flight of a day"}
        )
        saved = await client.call_tool("workflow.save", {"content": SEAT_CHECK})
        broken = await client.call_tool("w_seat_check", {"flight_id": "FL-NOPE-1"})
        failed = error_payload(broken) or {}
        repaired = await client.call_tool(
            "workflow.repair_and_rerun", {"run_id": failed.get("run_id")}
        )
    async with httpx.AsyncClient() as http:
        rerun = (await http.get(f"{server}/runs/{repaired.structured_content['run_id']}")).json()
    assert version == MODERN
    assert not executed.is_error and executed.structured_content["status"] == "succeeded"
    assert not authored.is_error, authored
    assert authored.structured_content["result"]["seats"] >= 1
    assert len(asked) == 2, asked  # the yield, then the inputs the drafted workflow needs
    assert not saved.is_error and broken.is_error and failed["error_code"] == "WORKFLOW_FAILED"
    assert not repaired.is_error, repaired
    assert rerun["params"]["flight_id"] == FLIGHT_2 and rerun["status"] == "succeeded"


async def test_the_sdk_client_without_the_extension_gets_missing_capability(
    server: str,
) -> None:
    async with mcp_client(server, mode=MODERN) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("workflow.execute", {"workflow_id": "book_flight"})
    assert raised.value.error.code == -32021
