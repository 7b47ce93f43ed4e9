"""Errors at the MCP and HTTP edges: correlation ids, the log line, conflict suggestions.

Every error's ``correlation_id`` is the request's ``X-Request-ID`` (given by the client or made
by the server, and sent back in that header), and the one log line that records the error
carries it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from loguru import logger

from tests.support.mcp_client import call, confirmed_call, error_payload, mcp_client
from tests.support.mcp_raw import RawMcp

BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


@pytest.fixture
def log_records() -> Iterator[list[dict[str, Any]]]:
    """The server's log records (message and bound fields) while the test runs."""
    records: list[dict[str, Any]] = []

    def sink(message: Any) -> None:
        record = message.record
        records.append({"message": record["message"], **record["extra"]})

    sink_id = logger.add(sink, level="DEBUG")
    yield records
    logger.remove(sink_id)


def lines_of(records: list[dict[str, Any]], correlation_id: str) -> list[dict[str, Any]]:
    return [r for r in records if r.get("correlation_id") == correlation_id and "error_code" in r]


async def tool_error(raw: RawMcp, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = await raw.request("tools/call", {"name": name, "arguments": arguments})
    result = answer["result"]
    assert result["isError"] is True, result
    text = result["content"][0]["text"]
    payload: dict[str, Any] = json.loads(text.partition("\n")[2])
    return payload


async def test_an_error_carries_the_request_id_and_is_logged_once_with_it(
    server: str, log_records: list[dict[str, Any]]
) -> None:
    async with RawMcp(server) as raw:
        raw.extra_headers["X-Request-ID"] = "req-7f3a-given-by-the-client"
        given = await tool_error(raw, "workflow.get", {"workflow_id": "nope"})
        assert raw.last_headers["x-request-id"] == "req-7f3a-given-by-the-client"
        del raw.extra_headers["X-Request-ID"]
        made = await tool_error(raw, "search_flights", {"origin": 5})
        made_header = raw.last_headers["x-request-id"]
    assert given["correlation_id"] == "req-7f3a-given-by-the-client"
    assert given["category"] == "not_found"  # not an internal error, and still logged
    assert made["correlation_id"] == made_header  # made by the server, sent back
    for payload in (given, made):
        lines = lines_of(log_records, payload["correlation_id"])
        assert len(lines) == 1, lines  # logged once
        assert lines[0]["error_code"] == payload["error_code"]
        assert payload["message"] in lines[0]["message"]


async def test_a_protocol_error_and_a_resource_error_carry_it_too(
    server: str, log_records: list[dict[str, Any]]
) -> None:
    async with RawMcp(server) as raw:
        raw.extra_headers["X-Request-ID"] = "req-unknown-tool"
        unknown = await raw.request("tools/call", {"name": "drop_tables", "arguments": {}})
        raw.extra_headers["X-Request-ID"] = "req-unknown-resource"
        missing = await raw.request("resources/read", {"uri": "workflow.manifest:nope"})
    assert unknown["error"]["code"] == -32602
    assert unknown["error"]["data"]["correlation_id"] == "req-unknown-tool"
    assert missing["error"]["code"] == -32002
    assert missing["error"]["data"]["correlation_id"] == "req-unknown-resource"
    assert len(lines_of(log_records, "req-unknown-tool")) == 1
    assert len(lines_of(log_records, "req-unknown-resource")) == 1


def test_a_rest_error_is_logged_with_the_request_id(
    server: str, log_records: list[dict[str, Any]]
) -> None:
    answer = httpx.get(f"{server}/workflows/nope", headers={"X-Request-ID": "req-rest-404"})
    assert answer.status_code == 404
    assert answer.headers["x-request-id"] == "req-rest-404"
    assert answer.json()["correlation_id"] == "req-rest-404"
    lines = lines_of(log_records, "req-rest-404")
    assert len(lines) == 1 and lines[0]["error_code"] == "not_found"


async def test_each_conflict_kind_suggests_its_own_next_action(server: str) -> None:
    async with mcp_client(server) as client:
        run = await call(client, "workflow.run", workflow_id="book_with_approval", inputs=BOOK)
        first = await confirmed_call(client, "workflow.cancel", run_id=run["run_id"])
        again = await call(client, "workflow.cancel", operation_id=run["run_id"])
        current = await call(client, "workflow.get", workflow_id="book_flight")
        stale = await call(
            client,
            "workflow.save",
            content=current["content"],
            workflow_id="book_flight",
            version="0" * 16,
        )
        used = await confirmed_call(client, "workflow.delete", workflow_id="book_flight")
    assert first["status"] == "cancelled"
    assert again["is_error"] and again["category"] == "conflict"
    assert again["suggested_action"].startswith("Nothing to do: the run has already ended")
    assert stale["is_error"] and "workflow.get" in stale["suggested_action"]
    assert used["is_error"] and "used_by" in used["suggested_action"]  # book_trip calls it
    assert (
        len({again["suggested_action"], stale["suggested_action"], used["suggested_action"]}) == 3
    )


async def test_an_error_result_of_a_tool_with_an_output_schema_is_text_only(server: str) -> None:
    async with mcp_client(server) as client:
        typed = await client.call_tool("search_flights", {"origin": 5})
        untyped = await client.call_tool("workflow.get", {"workflow_id": "nope"})
    assert typed.is_error and typed.structured_content is None
    payload = error_payload(typed)
    assert payload is not None and payload["error_code"] == "INVALID_INPUT"
    assert untyped.is_error and untyped.structured_content == error_payload(untyped)


async def test_cancelling_a_task_that_ended_before_its_run_is_a_run_ended_conflict(
    start_server: Callable[..., str],
) -> None:
    url = start_server(openai_base_url=None, openai_api_key=None)  # drafting fails at once
    async with RawMcp(url) as raw:
        created = await raw.request(
            "tools/call",
            {"name": "workflow.author_and_run", "arguments": {"goal": "x"}, "task": {}},
        )
        task_id = created["result"]["task"]["taskId"]
        assert task_id.startswith("task-")  # no run yet: the id is the task's own
        for _ in range(600):
            task = (await raw.request("tasks/get", {"taskId": task_id}))["result"]
            if task["status"] == "failed":
                break
            await asyncio.sleep(0.05)
        cancel = await tool_error(raw, "workflow.cancel", {"operation_id": task_id})
    assert cancel["category"] == "conflict" and cancel["context"]["task_id"] == task_id
    assert cancel["suggested_action"].startswith("Nothing to do: the run has already ended")
