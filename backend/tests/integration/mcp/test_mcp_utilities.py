"""The MCP utilities beyond tools: completion, log levels, resource subscriptions, resumable
streams (2025-11-25), against a live server with real clients."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import mcp_types as types
import pytest

from tests.support.documents import draft
from tests.support.mcp_client import call, mcp_client
from tests.support.mcp_raw import PROTOCOL, RawMcp

DRAFT = draft("seat_check")
# The SDK client warns that logging and resources/subscribe go away in 2026-07-28; these
# tests speak 2025-11-25, where they are the protocol.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
WAIT_S = 15.0  # bound on waiting for a notification (no timing is asserted)


async def test_completion_of_workflow_ids_domains_and_unknown_references(server: str) -> None:
    async with mcp_client(server) as client:
        prompt = types.PromptReference(type="ref/prompt", name="workflow.run_with_inputs")
        ids = await client.complete(prompt, {"name": "workflow_id", "value": "book_"})
        graph = types.ResourceTemplateReference(
            type="ref/resource", uri="workflow://{domain}/{workflow}"
        )
        domains = await client.complete(graph, {"name": "domain", "value": "tr"})
        in_domain = await client.complete(
            graph, {"name": "workflow", "value": ""}, {"domain": "travel_booking"}
        )
        manifest = types.ResourceTemplateReference(
            type="ref/resource", uri="workflow.manifest:{workflow_id}"
        )
        manifests = await client.complete(manifest, {"name": "workflow_id", "value": "BOOK_H"})
        unknown = await client.complete(
            types.PromptReference(type="ref/prompt", name="no_such_prompt"),
            {"name": "arg", "value": "x"},
        )
    assert {"book_flight", "book_hotel", "book_trip", "book_with_approval"} <= set(
        ids.completion.values
    )
    assert all(v.startswith("book_") for v in ids.completion.values)
    assert domains.completion.values == ["travel_booking"]
    assert "book_flight" in in_domain.completion.values
    assert "overview" in in_domain.completion.values
    assert manifests.completion.values == ["book_hotel"]  # case-insensitive prefix
    assert unknown.completion.values == []


async def test_log_messages_follow_the_level_the_session_set(server: str) -> None:
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with mcp_client(server, logging_callback=on_log) as client:
        await call(client, "workflow.get", workflow_id="nope")  # no level set: nothing sent
        silent = len(received)
        await client.set_logging_level("warning")
        await call(client, "workflow.get", workflow_id="nope")  # notice: below warning
        await call(client, "w_book_flight", origin="XXX")  # validation: notice
        below = len(received)
        await client.set_logging_level("debug")
        await call(client, "workflow.get", workflow_id="nope")
        await call(client, "workflow.list")
    assert silent == 0 and below == 0
    events = [(m.level, m.data["event"], m.data["tool"]) for m in received]
    assert events == [
        ("debug", "tool_call", "workflow.get"),
        ("notice", "tool_error", "workflow.get"),
        ("debug", "tool_call", "workflow.list"),
        ("info", "tool_result", "workflow.list"),
    ]
    error = received[1].data
    assert error["error_code"] == "NOT_FOUND" and error["correlation_id"]
    assert all(m.logger == "dynamic-tools" for m in received)


async def test_a_subscribed_resource_is_reported_when_it_changes(server: str) -> None:
    updated: list[str] = []
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            changed.set()

    async with mcp_client(server, message_handler=on_message) as client:
        await client.subscribe_resource("workflow.manifest:seat_check")  # does not exist yet
        await client.subscribe_resource("dynamic-tools://workflow.manifests")
        await client.subscribe_resource("workflow://travel_booking/book_flight")
        saved = await call(client, "workflow.save", content=DRAFT)  # over MCP
        assert not saved["is_error"], saved
        await _until(changed, lambda: len(updated) >= 2)
        assert set(updated) == {
            "workflow.manifest:seat_check",
            "dynamic-tools://workflow.manifests",
        }
        updated.clear()
        changed.clear()
        await client.unsubscribe_resource("dynamic-tools://workflow.manifests")
        edited = DRAFT.replace("Check the seats", "Check the free seats")
        async with httpx.AsyncClient() as http:  # over REST: noticed by the watcher
            answer = await http.put(
                f"{server}/workflows/seat_check",
                json={"content": edited, "expected_version": saved["version"]},
            )
            assert answer.status_code == 200, answer.text
        await _until(changed, lambda: bool(updated))
    assert updated == ["workflow.manifest:seat_check"]  # not the unsubscribed manifests list


async def _until(event: asyncio.Event, done: Any) -> None:
    for _ in range(100):
        if done():
            return
        event.clear()
        try:
            await asyncio.wait_for(event.wait(), WAIT_S / 100)
        except TimeoutError:
            continue
    assert done(), "no notification arrived"


async def test_capabilities_announce_the_utilities(server: str) -> None:
    async with RawMcp(server) as raw:
        caps = raw.server_capabilities
    assert caps["completions"] == {} and caps["logging"] == {}
    assert caps["resources"]["subscribe"] is True


async def test_a_dropped_stream_is_resumed_with_last_event_id(server: str) -> None:
    """The client loses the POST stream mid-call and gets the answer by reconnecting."""
    httpx.post(
        f"{server}/demo/travel/_faults",
        json={"operation": "search_flights", "fail_next": 0, "latency_ms": 1500},
    )
    async with RawMcp(server) as raw:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Session-Id": str(raw.session_id),
        }
        call_message = {
            "jsonrpc": "2.0",
            "id": 41,
            "method": "tools/call",
            "params": {
                "name": "search_flights",
                "arguments": {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
            },
        }
        priming: dict[str, str] = {}
        async with (
            httpx.AsyncClient(timeout=30) as http,
            http.stream("POST", raw.url, json=call_message, headers=headers) as response,
        ):
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():  # the priming event, then hang up
                if not line:
                    break
                field, _, value = line.partition(":")
                priming[field] = value.strip()
        assert priming["data"] == "" and priming["id"] and priming["retry"] == "1000"
        answer = None
        async with (
            httpx.AsyncClient(timeout=30) as http,
            http.stream(
                "GET", raw.url, headers={**headers, "Last-Event-ID": priming["id"]}
            ) as replay,
        ):
            assert replay.status_code == 200
            async for line in replay.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    data = json.loads(line[5:])
                    if data.get("id") == 41:
                        answer = data
                        break
    assert answer is not None and answer["result"]["isError"] is False
    assert answer["result"]["structuredContent"]["result"][0]["origin"] == "AMS"


async def test_one_session_cannot_replay_another_s_events(server: str) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
    }
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    lines: list[str] = []
    async with (
        RawMcp(server) as first,
        RawMcp(server) as second,
        httpx.AsyncClient(timeout=30) as http,
    ):
        posted = await http.post(
            first.url, json=message, headers={**headers, "Mcp-Session-Id": str(first.session_id)}
        )
        event_id = next(
            line[3:].strip() for line in posted.text.splitlines() if line.startswith("id:")
        )
        theirs = {**headers, "Mcp-Session-Id": str(second.session_id), "Last-Event-ID": event_id}
        async with http.stream("GET", second.url, headers=theirs) as replay:
            async for line in replay.aiter_lines():
                lines.append(line)
                if not line or len(lines) > 3:
                    break
    assert event_id and not [x for x in lines if x.startswith("data:") and "tools" in x]
