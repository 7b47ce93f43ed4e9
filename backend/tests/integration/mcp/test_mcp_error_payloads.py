"""The error payload is complete on every error path (docs/mcp-conformance.md, "Error results").

Every tool a fully loaded server lists is called, in both protocol revisions, with a required
argument missing and with one of the wrong type: each answer carries ``error_code``,
``category``, ``message``, a ``context`` naming the tool, ``retryable``, ``suggested_action``,
``correlation_id``, and violations that each have ``path``, ``rule`` and ``message``. Then the
cases a user found incomplete: a workflow that does not validate on save (its id, file path,
line and column), ``workflow.resume`` and ``workflow.repair_and_rerun`` (the run id), no LLM
configured (the settings), the unknown-tool JSON-RPC error's ``data``, a rename's violation
rule; and ``workflow.execute`` taking ``manifest``, a markdown tool's schema error carrying its
``error_type`` and ``suggestion``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import mcp_types as types

from dynamic_tools.mcp.tasks import TasksExtension
from tests.integration.mcp.test_mcp_strict_arguments import wrong_value
from tests.support.mcp_client import LEGACY, MODERN, call, error_payload, mcp_client
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import BOOK, call_as_task, poll

CATEGORIES = {"validation", "not_found", "permission", "conflict", "execution", "internal"}
BROKEN_YAML = "workflows:\n  broken:\n    graph: [unclosed\n"


def check_payload(data: dict[str, Any], where: str, *, tool: str | None = None) -> None:
    """Every field of the error payload is there, with its type."""
    assert isinstance(data.get("error_code"), str) and data["error_code"], where
    assert data.get("category") in CATEGORIES, where
    assert isinstance(data.get("message"), str) and data["message"], where
    assert isinstance(data.get("context"), dict), where
    if tool is not None:
        assert data["context"].get("tool") == tool, where
    assert isinstance(data.get("retryable"), bool), where
    assert isinstance(data.get("suggested_action"), str) and data["suggested_action"], where
    assert isinstance(data.get("correlation_id"), str) and data["correlation_id"], where
    for violation in data.get("violations") or []:
        for field in ("path", "rule", "message"):
            assert isinstance(violation.get(field), str) and violation[field], (where, violation)


def bad_calls(tool: types.Tool) -> list[tuple[str, dict[str, Any]]]:
    """(what, arguments): a required argument missing, and one of the wrong type."""
    schema = tool.input_schema or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    required: list[str] = list(schema.get("required") or [])
    found: list[tuple[str, dict[str, Any]]] = []
    if required:
        found.append((f"missing {required[0]}", {}))
    for name in [*required, *properties]:  # a required argument first, else any typed one
        value = wrong_value(properties.get(name) or {})
        if value is not None:
            found.append((f"mistyped {name}", {name: value}))
            break
    return found


async def all_tools(client: Any) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    for _ in range(100):  # pages
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise AssertionError("tools/list never ended")


async def test_every_tool_answers_a_bad_call_with_the_whole_payload(server: str) -> None:
    for mode in (MODERN, LEGACY):
        checked = 0
        # on 2026-07-28 the task-required tools answer through the Tasks extension
        extensions = [TasksExtension()] if mode == MODERN else []
        async with mcp_client(server, mode=mode, extensions=extensions) as client:
            tools = await all_tools(client)
            names = {t.name for t in tools}
            assert {"workflow.save", "catalog.import_openapi", "load_workflow"} <= names, mode
            assert {"workflow.execute", "search_flights"} <= names, mode
            assert any(n.startswith("w_") for n in names), mode
            for tool in tools:
                for what, arguments in bad_calls(tool):
                    result = await client.call_tool(tool.name, arguments)
                    data = dict(result.structured_content or error_payload(result) or {})
                    where = f"{mode} {tool.name} ({what}): {data or result.content}"
                    assert result.is_error, where
                    check_payload(data, where, tool=tool.name)
                    assert data["violations"], where
                    checked += 1
        assert checked >= len(tools), mode


async def test_a_workflow_that_does_not_save_is_named_with_its_file_line_and_column(
    server: str,
) -> None:
    async with mcp_client(server) as client:
        broken = await call(client, "workflow.save", workflow_id="broken", content=BROKEN_YAML)
        invalid = await call(
            client,
            "workflow.save",
            content="workflows:\n  lost:\n    graph:\n      a: {call: no_such_tool}\n",
        )
    for data in (broken, invalid):
        check_payload(data, str(data), tool="workflow.save")
        assert data["error_code"] == "WORKFLOW_INVALID"
    assert broken["context"]["workflow_id"] == "broken"
    assert broken["context"]["file"] == "broken.yaml"
    assert broken["context"]["path"].endswith("/broken.yaml")
    syntax = broken["violations"][0]
    assert (broken["context"]["line"], broken["context"]["column"]) == (4, 1)
    assert (syntax["line"], syntax["column"]) == (4, 1)  # PyYAML's mark, 1-based
    # no workflow_id argument: the document's first workflow names it, and the file it would be
    assert invalid["context"]["workflow_id"] == "lost"
    assert invalid["context"]["path"].endswith("/lost.yaml")
    assert isinstance(invalid["context"]["line"], int)


async def test_resume_and_rename_errors_name_the_run_and_the_rule(server: str) -> None:
    async with mcp_client(server) as client:
        waiting = await call(client, "w_book_with_approval", **BOOK)
        run_id = waiting["run_id"]
        resumed = await call(client, "workflow.resume", run_id=run_id, values={"zz": 1})
        renamed = await call(client, "workflow.rename", workflow_id="book_flight", new_id="bad id!")
        await call(client, "workflow.cancel", run_id=run_id)
    assert waiting["status"] == "waiting_input", waiting
    check_payload(resumed, str(resumed), tool="workflow.resume")
    assert resumed["error_code"] == "INVALID_INPUT"
    assert resumed["context"]["run_id"] == run_id
    check_payload(renamed, str(renamed), tool="workflow.rename")
    assert renamed["violations"][0]["path"] == "new_id"
    assert renamed["violations"][0]["rule"] == "pattern"
    assert renamed["context"]["workflow_id"] == "book_flight"


async def test_task_errors_name_the_run_and_the_missing_settings(
    server: str, start_server: Callable[..., str]
) -> None:
    async with mcp_client(server) as client:
        started = await call(client, "workflow.run", workflow_id="book_with_approval", inputs=BOOK)
    async with RawMcp(server) as mcp:
        task = await call_as_task(mcp, "workflow.repair_and_rerun", {"run_id": started["run_id"]})
        await poll(mcp, task["taskId"], {"failed"})
        repair = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    check_payload(repair["structuredContent"], str(repair), tool="workflow.repair_and_rerun")
    assert repair["structuredContent"]["error_code"] == "INVALID_INPUT"
    assert repair["structuredContent"]["context"]["run_id"] == started["run_id"]
    httpx.post(f"{server}/runs/{started['run_id']}/cancel")

    no_llm = start_server(openai_base_url=None, openai_api_key=None)
    async with RawMcp(no_llm) as mcp:
        task = await call_as_task(mcp, "workflow.author_and_run", {"goal": "anything"})
        await poll(mcp, task["taskId"], {"failed"})
        drafted = (await mcp.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    data = drafted["structuredContent"]
    check_payload(data, str(drafted), tool="workflow.author_and_run")
    assert data["error_code"] == "NOT_CONFIGURED"
    assert data["context"]["settings"] == ["OPENAI_API_KEY", "OPENAI_BASE_URL"]


async def test_the_unknown_tool_error_carries_the_whole_payload(server: str) -> None:
    async with RawMcp(server) as raw:
        answer = await raw.request("tools/call", {"name": "drop_tables", "arguments": {}})
    assert answer["error"]["code"] == -32602
    data = answer["error"]["data"]
    check_payload(data, str(answer))
    assert data["error_code"] == "UNKNOWN_TOOL"
    assert data["context"] == {"tool": "drop_tables"}
    assert "tools/list" in data["suggested_action"]


async def test_workflow_execute_takes_a_manifest_like_workflow_run(server: str) -> None:
    async with mcp_client(server) as client:
        document = (await call(client, "workflow.get", workflow_id="book_flight"))["content"]
    # a draft given inline is model-composed: its booking needs X-Allow-Unsafe-Paths
    allowed = {"X-Allow-Unsafe-Paths": "create_booking"}
    async with RawMcp(server, headers=allowed) as mcp:
        task = await call_as_task(mcp, "workflow.execute", {"manifest": document, "inputs": BOOK})
        assert task["status"] == "working", task
        done = await poll(mcp, task["taskId"], {"completed", "failed", "input_required"})
        both = await call_as_task(
            mcp, "workflow.execute", {"manifest": document, "content": document + "\n# other"}
        )
        refused = await poll(mcp, both["taskId"], {"failed"})
        disagree = (await mcp.request("tasks/result", {"taskId": both["taskId"]}))["result"]
    assert done["status"] == "completed", done
    assert done["_meta"]["dynamic-tools/run"]["workflow_id"] == "book_flight"
    assert refused["status"] == "failed"
    assert disagree["structuredContent"]["violations"][0]["rule"] == "alias"


async def test_a_markdown_tool_s_schema_error_has_its_error_type_and_suggestion(
    server: str,
) -> None:
    async with mcp_client(server) as client:
        result = await client.call_tool(
            "report_step_result", {"step_number": 1, "status": "great", "assertion_results": []}
        )
    data = error_payload(result)
    assert data is not None
    check_payload(data, str(data), tool="report_step_result")
    assert data["error_type"] == "invalid_request" == data["error_code"].lower()
    assert "report_step_result" in data["suggestion"]
    assert data["suggested_action"] == data["suggestion"]
    assert [v["path"] for v in data["violations"]] == ["status"]
