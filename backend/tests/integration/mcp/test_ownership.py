"""Two principals on one server: B can neither see nor change A's runs, tasks or sessions.

The probe that found it: with one shared token, B's ``workflow.cancel`` of A's task answered
``cancelled: true`` and B's ``workflow.resume`` answered A's pending approval (a booking and a
payment in A's name); REST acted on any run id. Now each principal (an API key) owns what it
starts, and another's id answers exactly as an unknown id — on REST (get, list, events,
resume, cancel, redrive) and MCP in both protocol revisions (``workflow.*``, ``w_*`` resumes,
``tasks/*``, markdown tools). An admin sees everyone's runs with their owner. A principal
holding only ``read`` is refused what needs ``run`` with 403 and the scope named.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.mcp_client import LEGACY, MODERN, confirmed_call, mcp_client
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, call_as_task, poll

ADMIN_TOKEN = "owners-admin-token-61f"
UNKNOWN = "0" * 32


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_key(url: str, name: str, *scopes: str) -> str:
    made = httpx.post(
        f"{url}/keys", json={"name": name, "scopes": list(scopes)}, headers=bearer(ADMIN_TOKEN)
    )
    assert made.status_code == 201, made.text
    return str(made.json()["key"])


@pytest.fixture
def guarded(start_server: Callable[..., str]) -> tuple[str, str, str, str]:
    """A server with API_TOKEN and three keys: A and B (read, run), R (read only)."""
    url = start_server(api_token=ADMIN_TOKEN, enable_demo_api=True)
    return (
        url,
        new_key(url, "alice", "read", "run"),
        new_key(url, "bob", "read", "run"),
        new_key(url, "reader", "read"),
    )


def shape(answer: httpx.Response, run_id: str) -> tuple[int, str, str]:
    """Status, error code and message with the id replaced: what an unknown id answers."""
    body = answer.json()
    return answer.status_code, body["error_code"], body["message"].replace(run_id, "<id>")


def waiting_run(url: str, key: str) -> str:
    started = httpx.post(
        f"{url}/workflows/book_with_approval/runs", json={"params": BOOK}, headers=bearer(key)
    )
    assert started.status_code == 202, started.text
    run_id = str(started.json()["run_id"])
    for _ in range(300):
        run = httpx.get(f"{url}/runs/{run_id}", headers=bearer(key)).json()
        if run["status"] == "waiting_input":
            return run_id
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never waited: {run}")


def test_over_rest_anothers_run_is_an_unknown_id(guarded: tuple[str, str, str, str]) -> None:
    url, alice, bob, _ = guarded
    run_id = waiting_run(url, alice)
    unknown = shape(httpx.get(f"{url}/runs/{UNKNOWN}", headers=bearer(bob)), UNKNOWN)
    attempts = {
        "get": httpx.get(f"{url}/runs/{run_id}", headers=bearer(bob)),
        "events": httpx.get(f"{url}/runs/{run_id}/events", headers=bearer(bob)),
        "resume": httpx.post(
            f"{url}/runs/{run_id}/resume",
            json={"values": {"flight_id": "FL-AMSBCN-20261201-1", "approved": True}},
            headers=bearer(bob),
        ),
        "cancel": httpx.post(f"{url}/runs/{run_id}/cancel", headers=bearer(bob)),
        "redrive": httpx.post(f"{url}/runs/{run_id}/redrive", headers=bearer(bob)),
    }
    for what, answer in attempts.items():
        assert shape(answer, run_id) == unknown, what
    bobs = httpx.get(f"{url}/runs", headers=bearer(bob)).json()
    alices = httpx.get(f"{url}/runs", headers=bearer(alice)).json()
    everyone = httpx.get(f"{url}/runs", headers=bearer(ADMIN_TOKEN)).json()
    alice_id = httpx.get(f"{url}/me", headers=bearer(alice)).json()["id"]
    filtered = httpx.get(
        f"{url}/runs", params={"owner": alice_id}, headers=bearer(ADMIN_TOKEN)
    ).json()
    assert run_id not in {r["run_id"] for r in bobs["runs"]} and bobs["total"] == 0
    assert [r["run_id"] for r in alices["runs"]] == [run_id]
    assert {r["owner"] for r in everyone["runs"]} == {alice_id}
    assert [r["run_id"] for r in filtered["runs"]] == [run_id]
    still = httpx.get(f"{url}/runs/{run_id}", headers=bearer(alice)).json()
    assert still["status"] == "waiting_input" and still["owner"] == alice_id
    seen_by_admin = httpx.get(f"{url}/runs/{run_id}", headers=bearer(ADMIN_TOKEN))
    assert seen_by_admin.status_code == 200
    cancelled = httpx.post(f"{url}/runs/{run_id}/cancel", headers=bearer(alice))
    assert cancelled.json()["status"] == "cancelled"


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_over_mcp_anothers_run_is_an_unknown_id(
    guarded: tuple[str, str, str, str], mode: str
) -> None:
    url, alice, bob, _ = guarded
    run_id = waiting_run(url, alice)
    async with mcp_client(url, headers=bearer(bob), mode=mode) as client:
        answers = {
            "cancel": await client.call_tool("workflow.cancel", {"run_id": run_id}),
            "cancel_by_operation": await client.call_tool(
                "workflow.cancel", {"operation_id": run_id}
            ),
            "resume": await client.call_tool(
                "workflow.resume",
                {"run_id": run_id, "values": {"flight_id": "FL-AMSBCN-20261201-1"}},
            ),
            "redrive": await client.call_tool("workflow.redrive", {"run_id": run_id}),
        }
        unknown = await client.call_tool("workflow.cancel", {"run_id": UNKNOWN})
    expected = json.dumps(unknown.model_dump(mode="json")).replace(UNKNOWN, "<id>")
    for what, answer in answers.items():
        assert answer.is_error, what
        text = json.dumps(answer.model_dump(mode="json"))
        assert "NOT_FOUND" in text and run_id in text, (what, text)
        if what in ("cancel", "cancel_by_operation"):
            same = text.replace(run_id, "<id>")
            # the correlation ids differ; the rest is the unknown id's answer
            assert _without_correlation(same) == _without_correlation(expected), what
    run = httpx.get(f"{url}/runs/{run_id}", headers=bearer(alice)).json()
    assert run["status"] == "waiting_input", "another principal changed the run"


def _without_correlation(text: str) -> str:
    data = json.loads(text)
    data.get("structured_content", {}).pop("correlation_id", None)
    for item in data.get("content", []):
        item.pop("text", None)
    return json.dumps(data, sort_keys=True)


async def test_a_task_is_its_principals_across_sessions_and_nobody_elses(
    guarded: tuple[str, str, str, str],
) -> None:
    url, alice, bob, _ = guarded
    async with RawMcp(url, headers=bearer(alice)) as first:
        task = await call_as_task(first, "w_book_with_approval", BOOK)
        task_id = task["taskId"]
        await poll(first, task_id, {"input_required"})
    async with RawMcp(url, headers=bearer(alice)) as again:  # another session, same principal
        mine = (await again.request("tasks/get", {"taskId": task_id}))["result"]
    async with RawMcp(url, headers=bearer(bob)) as other:
        listed = (await other.request("tasks/list"))["result"]["tasks"]
        refused = {
            m: (await other.request(m, {"taskId": task_id}))["error"]["message"]
            for m in ("tasks/get", "tasks/result", "tasks/cancel")
        }
        unknown = (await other.request("tasks/get", {"taskId": UNKNOWN}))["error"]["message"]
        by_operation = await other.request(
            "tools/call", {"name": "workflow.cancel", "arguments": {"operation_id": task_id}}
        )
    async with RawMcp(url, headers=bearer(ADMIN_TOKEN)) as admin:
        every = (await admin.request("tasks/list"))["result"]["tasks"]
    assert mine["status"] == "input_required"
    assert task_id not in {t["taskId"] for t in listed}
    for method, message in refused.items():
        assert message.replace(task_id, "<id>") == unknown.replace(UNKNOWN, "<id>"), method
    assert by_operation["result"]["isError"] is True
    assert "NOT_FOUND" in json.dumps(by_operation["result"])
    assert task_id in {t["taskId"] for t in every}
    run = httpx.get(f"{url}/runs/{task_id}", headers=bearer(alice)).json()
    assert run["status"] == "waiting_input"


async def test_markdown_sessions_are_each_principals_own(
    guarded: tuple[str, str, str, str],
) -> None:
    url, alice, bob, _ = guarded
    workflow = (
        "# Check\n\n### 🔧 WORKFLOW STEP: Look\n```\nSearch flights from AMS.\n```\n\n"
        "### 🛠️ TOOL: search_flights\n"
    )
    async with mcp_client(url, headers=bearer(alice)) as client:
        loaded = await client.call_tool(
            "load_workflow", {"session_id": "shared-name", "content": workflow}
        )
        state = await client.call_tool("get_workflow_state", {"session_id": "shared-name"})
    async with mcp_client(url, headers=bearer(bob)) as client:
        theirs = await client.call_tool("get_workflow_state", {"session_id": "shared-name"})
        never = await client.call_tool("get_workflow_state", {"session_id": "never-used"})
    assert not loaded.is_error, loaded.content
    assert not state.is_error and "Check" in json.dumps(state.model_dump(mode="json"))
    shown = json.dumps(theirs.model_dump(mode="json"))
    assert "Check" not in shown and "Look at the sky" not in shown
    assert _answer(theirs).replace("shared-name", "<id>") == _answer(never).replace(
        "never-used", "<id>"
    )


def _answer(result: Any) -> str:
    data = dict(result.structured_content or {})
    data.pop("correlation_id", None)
    return json.dumps(data, sort_keys=True)


async def test_read_only_is_refused_running_with_the_scope_named(
    guarded: tuple[str, str, str, str],
) -> None:
    url, _, _, reader = guarded
    rest = httpx.post(
        f"{url}/workflows/book_flight/runs", json={"params": BOOK}, headers=bearer(reader)
    )
    assert rest.status_code == 403 and rest.json()["context"]["scope"] == "run"
    async with RawMcp(url, headers=bearer(reader)) as raw:
        listed = {t["name"] for t in (await raw.request("tools/list"))["result"]["tools"]}
        call = {"name": "w_book_flight", "arguments": BOOK}
        refused = await raw.request("tools/call", call)
        answer = raw.last_response
        readable = await raw.request("tools/call", {"name": "workflow.list", "arguments": {}})
    assert refused["error"]["data"]["error_code"] == "INSUFFICIENT_SCOPE"
    assert answer is not None and answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope", scope="run"')
    assert 'oauth-protected-resource/mcp"' in challenge
    assert refused["error"]["data"]["context"]["scope"] == "run"
    assert "workflow.list" in listed and "w_book_flight" not in listed
    assert "search_flights" not in listed and "workflow.delete" not in listed
    assert readable["result"]["isError"] is False


async def test_authoring_tools_are_audited(guarded: tuple[str, str, str, str]) -> None:
    url, alice, _, _ = guarded
    async with mcp_client(url, headers=bearer(ADMIN_TOKEN)) as client:
        await confirmed_call(client, "workflow.delete", workflow_id="find_cheapest_across_dates")
    async with mcp_client(url, headers=bearer(alice)) as client:
        run_id = waiting_run(url, alice)
        await confirmed_call(client, "workflow.cancel", run_id=run_id)
    entries = httpx.get(f"{url}/audit", headers=bearer(ADMIN_TOKEN)).json()["entries"]
    done = [(e["principal"], e["action"], e["target"], e["outcome"]) for e in entries]
    alice_id = httpx.get(f"{url}/me", headers=bearer(alice)).json()["id"]
    assert ("admin", "workflow.delete", "workflow_id=find_cheapest_across_dates", "ok") in done
    # the first, previewing call of the two-step confirmation is recorded as not confirmed
    assert (
        "admin",
        "workflow.delete",
        "workflow_id=find_cheapest_across_dates",
        "not_confirmed",
    ) in done
    assert (alice_id, "workflow.cancel", f"run_id={run_id}", "ok") in done


async def test_a_recipe_is_its_teachers_own(
    guarded: tuple[str, str, str, str], fake_llm: FakeLLM
) -> None:
    url, alice, bob, _ = guarded
    search = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passengers": 2}
    recipe = "r_search_flights_by_date_destination_origin_passengers"
    fake_llm.script(tool_call("search_flights", search))
    async with mcp_client(url, headers=bearer(alice)) as client:
        taught = await client.call_tool(
            "api_query", {"question": "2 seats from AMS to BCN on 2026-12-01 please"}
        )
        alices = {t.name for t in (await client.list_tools()).tools}
    async with mcp_client(url, headers=bearer(bob)) as client:
        bobs = {t.name for t in (await client.list_tools()).tools}
        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                recipe, {"origin": "LIS", "destination": "MAD", "date": "2026-12-02"}
            )
    assert not taught.is_error, taught.content
    assert recipe in alices and recipe not in bobs
    assert "Unknown tool" in str(refused.value)  # for bob it does not exist


async def test_an_mcp_session_serves_only_the_principal_that_opened_it(
    guarded: tuple[str, str, str, str],
) -> None:
    url, alice, bob, _ = guarded
    async with RawMcp(url, headers=bearer(alice)) as mine:
        assert mine.session_id
        async with httpx.AsyncClient(timeout=30) as http:
            headers = {
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": "2025-11-25",
                "Mcp-Session-Id": mine.session_id,
            }
            message = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
            hijack = await http.post(f"{url}/mcp", json=message, headers={**headers, **bearer(bob)})
        still = await mine.request("tools/list")
    assert hijack.status_code == 404
    assert "result" in still
