"""workflow.author_and_run and the client: the draft comes from the client's model (MCP sampling)
when it offers one, and inputs the saved workflow still needs are asked with an elicitation form
built from its params; both requests travel on the task's tasks/result stream, tagged with the
task. Only a client that cannot ask (no elicitation) or a user who declines gets the list of
what is missing."""

from __future__ import annotations

from typing import Any

from tests.support.documents import draft
from tests.support.fake_llm import FakeLLM, text
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import call_as_task, poll, until

RELATED = "io.modelcontextprotocol/related-task"
SEATS = "```yaml\n" + draft("seats_for_cheapest") + "```"
GOAL = {"goal": "check the seats of the first flight of a day"}
TRIP = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}


async def test_missing_inputs_are_asked_through_an_elicitation_form(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text(SEATS))
    asked: list[dict[str, Any]] = []

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": TRIP}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", GOAL)
        waiting = await poll(mcp, task["taskId"], {"input_required", "failed"})
        result = await mcp.request("tasks/result", {"taskId": task["taskId"]}, on_request=answer)
        done = await poll(mcp, task["taskId"], {"completed", "failed"})
    assert waiting["status"] == "input_required", waiting
    assert "asking for inputs: origin, destination, date" in waiting["statusMessage"]
    assert len(asked) == 1 and asked[0]["method"] == "elicitation/create"
    params = asked[0]["params"]
    assert params["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert "seats_for_cheapest" in params["message"]
    form = params["requestedSchema"]
    assert set(form["properties"]) == {"origin", "destination", "date"}
    assert set(form["required"]) == {"origin", "destination", "date"}
    assert form["properties"]["date"] == {"type": "string", "title": "date", "format": "date"}
    assert form["properties"]["origin"]["description"] == "IATA code"
    assert done["status"] == "completed", done
    assert result["result"]["structuredContent"]["result"]["seats"] >= 1


async def test_a_user_who_declines_gets_the_list_of_missing_inputs(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text(SEATS))

    async def decline(request: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        task = await call_as_task(
            mcp, "workflow.author_and_run", {**GOAL, "inputs": {"origin": "AMS"}}
        )
        await poll(mcp, task["taskId"], {"input_required"})
        result = await mcp.request("tasks/result", {"taskId": task["taskId"]}, on_request=decline)
        failed = await poll(mcp, task["taskId"], {"failed"})
    error = result["result"]["structuredContent"]
    assert error["error_code"] == "INVALID_INPUT" and "decline" in error["message"]
    assert [v["path"] for v in error["violations"]] == ["inputs.destination", "inputs.date"]
    assert failed["_meta"]["dynamic-tools/run"]["progress_state"] == "failed"


async def test_a_client_without_elicitation_gets_the_list_at_once(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text(SEATS))
    async with RawMcp(server) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", GOAL)
        failed = await poll(mcp, task["taskId"], {"failed"})
        result = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
        saved = (
            await mcp.request(
                "tools/call",
                {"name": "workflow.get", "arguments": {"workflow_id": "seats_for_cheapest"}},
            )
        )["result"]
    error = result["structuredContent"]
    assert "no elicitation" in error["message"] and "INVALID_INPUT" in failed["statusMessage"]
    assert [v["path"] for v in error["violations"]] == [
        "inputs.origin",
        "inputs.destination",
        "inputs.date",
    ]
    assert not saved.get("isError"), "the workflow is saved although it could not run"


async def test_the_draft_comes_from_the_clients_model_through_tasks_result(
    server: str, fake_llm: FakeLLM
) -> None:
    sampled: list[dict[str, Any]] = []

    async def client_model(request: dict[str, Any]) -> dict[str, Any]:
        sampled.append(request)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": SEATS},
            "model": "client-model",
        }

    async with RawMcp(server, capabilities={"sampling": {}}) as mcp:
        await mcp.listen()
        task = await call_as_task(
            mcp, "workflow.author_and_run", {**GOAL, "inputs": TRIP}, progress_token=7
        )
        waiting = await poll(mcp, task["taskId"], {"input_required"})
        result = await mcp.request(
            "tasks/result", {"taskId": task["taskId"]}, on_request=client_model
        )

        def statuses() -> list[str]:
            pushed = mcp.notifications("notifications/tasks/status")
            return [n["status"] for n in pushed if n["taskId"] == task["taskId"]]

        def progress_messages() -> set[str]:
            return {p["message"] for p in mcp.notifications("notifications/progress")}

        await until(lambda: "completed" in statuses(), "the completed status notification")
        # Progress and status notifications reach the client on different streams: wait for
        # the node ends too instead of assuming they arrived first.
        await until(
            lambda: {"search: succeeded", "seats: succeeded"} <= progress_messages(),
            "the progress of both nodes",
        )
    progress = [p["message"] for p in mcp.notifications("notifications/progress")]
    assert statuses() == ["input_required", "working", "completed"]
    assert progress[:3] == ["drafting", "saving", "starting the run"], progress
    assert {"search: succeeded", "seats: succeeded"} <= set(progress)
    assert "sampling" in waiting["statusMessage"]
    assert sampled and sampled[0]["method"] == "sampling/createMessage"
    assert sampled[0]["params"]["_meta"][RELATED] == {"taskId": task["taskId"]}
    assert "check the seats" in sampled[0]["params"]["messages"][0]["content"]["text"]
    assert result["result"]["structuredContent"]["result"]["seats"] >= 1
    assert not fake_llm.requests, "the server's model was not needed"


async def test_answers_that_leave_inputs_missing_are_asked_again_then_fail(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text(SEATS))
    asked: list[dict[str, Any]] = []

    async def partial(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"origin": "AMS"}}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", GOAL)
        await poll(mcp, task["taskId"], {"input_required"})
        result = await mcp.request("tasks/result", {"taskId": task["taskId"]}, on_request=partial)
    error = result["result"]["structuredContent"]
    assert len(asked) == 3
    assert set(asked[0]["params"]["requestedSchema"]["properties"]) == {
        "origin",
        "destination",
        "date",
    }
    assert set(asked[1]["params"]["requestedSchema"]["properties"]) == {"destination", "date"}
    assert "not accepted" in asked[1]["params"]["message"]
    assert "after 3 asks" in error["message"]
    assert [v["path"] for v in error["violations"]] == ["inputs.destination", "inputs.date"]


async def test_a_secret_input_is_never_asked_in_a_form(server: str, fake_llm: FakeLLM) -> None:
    fake_llm.script(text(SEATS.replace("description: IATA code", "format: password")))
    asked: list[dict[str, Any]] = []

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": TRIP}

    async with RawMcp(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        task = await call_as_task(
            mcp, "workflow.author_and_run", {**GOAL, "inputs": {"date": "2026-12-01"}}
        )
        result = await mcp.request("tasks/result", {"taskId": task["taskId"]}, on_request=answer)
    error = result["result"]["structuredContent"]
    assert not asked
    assert "look like secrets (origin) are never asked" in error["message"]
    assert [v["path"] for v in error["violations"]] == ["inputs.origin", "inputs.destination"]
