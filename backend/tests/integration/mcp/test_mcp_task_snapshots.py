"""Task snapshots that tell the truth (MCP Tasks, 2025-11-25): the run's steps done, total and
current step in tasks/get, tasks/list and the status notifications, while the task runs and
after it ended; tasks/result of a task whose ttl ran out while it waited for input; and
workflow.repair_and_rerun re-running with inputs the repaired document accepts."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.documents import draft
from tests.support.fake_llm import FakeLLM, text
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, FLIGHT_2, call_as_task, poll, until

RUN = "dynamic-tools/run"


def steps(task: dict[str, Any]) -> tuple[int, int, str | None]:
    """A task's steps done, total and current step, as its ``_meta`` tells them."""
    run = task["_meta"][RUN]
    return run["steps_done"], run["steps_total"], run["current_step"]


async def listed(mcp: RawMcp, task_id: str) -> dict[str, Any]:
    tasks = (await mcp.request("tasks/list"))["result"]["tasks"]
    return next(t for t in tasks if t["taskId"] == task_id)


async def test_steps_done_total_and_current_step_while_the_task_runs_and_after(
    server: str,
) -> None:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"selected_flight_id": FLIGHT_2}}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        await mcp.listen()
        task = await call_as_task(mcp, "w_book_with_approval", BOOK, progress_token="tok")
        task_id = task["taskId"]

        def told() -> dict[str, dict[str, Any]]:
            notes = mcp.notifications("notifications/tasks/status")
            return {n["status"]: n for n in notes if n["taskId"] == task_id}

        waiting = await poll(mcp, task_id, {"input_required"})
        waiting_listed = await listed(mcp, task_id)
        await until(lambda: "input_required" in told(), "the input_required notification")
        result = await mcp.request("tasks/result", {"taskId": task_id}, on_request=answer)
        final = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
        final_listed = await listed(mcp, task_id)
        await until(lambda: "completed" in told(), "the completed notification")
    # book_with_approval: search → present_options (a yield) → book → pay
    assert steps(waiting) == steps(waiting_listed) == (1, 4, "present_options")
    assert steps(told()["input_required"]) == (1, 4, "present_options")
    done, total, _ = steps(told()["working"])  # after the answer: the run goes on
    assert total == 4 and 1 <= done <= 4
    assert result["result"]["structuredContent"]["status"] == "succeeded"
    assert steps(final) == steps(final_listed) == steps(told()["completed"]) == (4, 4, "pay")
    assert final["status"] == "completed" and "4/4 steps done" in final["statusMessage"]


async def test_a_task_waiting_past_its_ttl_ends_failed_with_a_message(server: str) -> None:
    async with RawMcp(server) as mcp:  # no elicitation: nobody here can answer the yield
        task = await call_as_task(mcp, "w_book_with_approval", BOOK, ttl=1000)
        task_id = task["taskId"]
        await poll(mcp, task_id, {"input_required"})
        answer = await mcp.request("tasks/result", {"taskId": task_id})  # blocks to the ttl
    async with httpx.AsyncClient() as http:
        run = (await http.get(f"{server}/runs/{task_id}")).json()
    result = answer["result"]
    assert result["isError"] is True, result
    error = result["structuredContent"]
    assert error["error_code"] == "TASK_EXPIRED"
    assert "ttl (1000 ms) ran out" in error["message"] and "'present_options'" in error["message"]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    assert run["status"] == "failed" and run["error"]["error_code"] == "TASK_EXPIRED"


SEAT_CHECK = draft("seat_check")
#: the repair gives the param a default, a flight that exists
REPAIRED = SEAT_CHECK.replace(
    "flight_id: {type: str, required: true}", f"flight_id: {{type: str, default: {FLIGHT_2}}}"
)


async def test_repair_and_rerun_after_an_execution_failure_uses_the_repaired_default(
    server: str, fake_llm: FakeLLM
) -> None:
    assert REPAIRED != SEAT_CHECK
    fake_llm.script(text("```yaml\n" + REPAIRED + "```"))
    async with RawMcp(server) as mcp:
        saved = await mcp.request(
            "tools/call", {"name": "workflow.save", "arguments": {"content": SEAT_CHECK}}
        )
        assert not saved["result"].get("isError"), saved
        broken = await call_as_task(mcp, "w_seat_check", {"flight_id": "FL-NOPE-1"})
        await poll(mcp, broken["taskId"], {"failed"})
        repair = await call_as_task(mcp, "workflow.repair_and_rerun", {"run_id": broken["taskId"]})
        done = await poll(mcp, repair["taskId"], {"completed", "failed"})
    async with httpx.AsyncClient() as http:
        failed_run = (await http.get(f"{server}/runs/{broken['taskId']}")).json()
        rerun = (await http.get(f"{server}/runs/{done['_meta'][RUN]['run_id']}")).json()
    assert done["status"] == "completed", done
    assert rerun["params"]["flight_id"] == FLIGHT_2 and rerun["status"] == "succeeded"
    api_message = failed_run["error"]["api_message"]
    assert api_message and "FL-NOPE-1" in str(failed_run["params"])
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert f"execution failed at node seats: {api_message}" in prompt
    assert "does not validate" not in prompt and "## Violations" not in prompt
    assert "FL-NOPE-1" in prompt  # the input that failed, for the model to see


async def test_repair_and_rerun_takes_the_values_the_caller_gives(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text("```yaml\n" + SEAT_CHECK.replace("Check the", "Check") + "```"))
    other = "FL-AMSBCN-20261201-1"
    async with RawMcp(server) as mcp:
        await mcp.request(
            "tools/call", {"name": "workflow.save", "arguments": {"content": SEAT_CHECK}}
        )
        broken = await call_as_task(mcp, "w_seat_check", {"flight_id": "FL-NOPE-1"})
        await poll(mcp, broken["taskId"], {"failed"})
        repair = await call_as_task(
            mcp,
            "workflow.repair_and_rerun",
            {"run_id": broken["taskId"], "inputs": {"flight_id": other}},
        )
        done = await poll(mcp, repair["taskId"], {"completed", "failed"})
    async with httpx.AsyncClient() as http:
        rerun = (await http.get(f"{server}/runs/{done['_meta'][RUN]['run_id']}")).json()
    assert done["status"] == "completed", done
    assert rerun["params"]["flight_id"] == other


SEATS_TOOL = {
    "name": "seats_of_flight",
    "description": "Seats left on a flight",
    "api": {
        "method": "GET",
        "base_url": "${PUBLIC_BASE_URL}/demo/travel",
        "path": "/flights/{flight_id}/availability",
    },
    "parameters": {"flight_id": {"type": "string", "in": "path", "required": True}},
}


async def test_repair_and_rerun_of_a_document_that_no_longer_validates_lists_its_violations(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text("```yaml\n" + REPAIRED + "```"))
    uses_tool = SEAT_CHECK.replace("call: check_availability", "call: seats_of_flight")
    async with httpx.AsyncClient() as http:
        created = await http.post(f"{server}/tools", json=SEATS_TOOL)
        assert created.status_code == 201, created.text
    async with RawMcp(server) as mcp:
        saved = await mcp.request(
            "tools/call", {"name": "workflow.save", "arguments": {"content": uses_tool}}
        )
        assert not saved["result"].get("isError"), saved
        broken = await call_as_task(mcp, "w_seat_check", {"flight_id": "FL-NOPE-1"})
        await poll(mcp, broken["taskId"], {"failed"})
        async with httpx.AsyncClient() as http:  # the tool goes: the document is now invalid
            removed = await http.delete(f"{server}/tools/seats_of_flight")
            assert removed.status_code in (200, 204), removed.text
        repair = await call_as_task(mcp, "workflow.repair_and_rerun", {"run_id": broken["taskId"]})
        done = await poll(mcp, repair["taskId"], {"completed", "failed"})
    assert done["status"] == "completed", done
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert "does not validate" in prompt and "## Violations" in prompt
    violations = prompt.split("## Violations")[1]
    assert '"rule": "unknown_tool"' in violations and "seats_of_flight" in violations
    assert "execution failed" not in prompt
