"""X-Target-Headers go to the session's own API only, on every path, and never change how a
request travels or who it claims to be; a registry tool gets its own credential and nothing of
the session's (README, Per-session headers)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.header_api import (
    FLOWS,
    PARTNER_SECRET,
    SECRET_NAME,
    SESSION_TOKEN,
    HeaderApi,
    Received,
    running_header_api,
)
from tests.support.mcp_client import mcp_client

SESSION_HEADERS = {"Authorization": SESSION_TOKEN, "X-Team": "blue", "cookie": "sid=7f"}
REFUSED = (
    "Host",
    "content-length",
    "Transfer-Encoding",
    "Connection",
    "Upgrade",
    "Proxy-Authorization",
    "Forwarded",
    "X-Forwarded-For",
    "idempotency-key",
    "traceparent",
)


@pytest.fixture
def partner() -> Iterator[HeaderApi]:
    with running_header_api({"notes.yaml": FLOWS}) as api:
        yield api


@pytest.fixture
def gateway(
    start_server: Callable[..., str], travel_root: Path, tmp_path: Path, partner: HeaderApi
) -> str:
    """Our server: the travel registry plus ``partner_rates``, whose secret it holds."""
    (travel_root / "tools" / "partner_rates.yaml").write_text(partner.registry_tool())
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / SECRET_NAME).write_text(PARTNER_SECRET)
    return start_server(allowed_target_hosts=[partner.host], secrets_dir=secrets)


def session(partner: HeaderApi, **more: str) -> dict[str, str]:
    """A session bringing its own API (the notes) with its credentials."""
    return {
        "X-Target-URL": partner.openapi,
        "X-API-Name": "notes",
        "X-Target-Headers": json.dumps(SESSION_HEADERS),
        **more,
    }


def carried_the_session_headers(call: Received) -> bool:
    return (call.one("authorization"), call.one("x-team"), call.one("cookie")) == (
        SESSION_TOKEN,
        "blue",
        "sid=7f",
    )


async def test_the_session_api_gets_the_session_headers_on_every_path(
    gateway: str, partner: HeaderApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(tool_call("get_note", {"note_id": "n2"}))
    async with mcp_client(gateway, headers=session(partner)) as client:
        direct = await client.call_tool("get_note", {"note_id": "n1"})
        executed = await client.call_tool("notes_execute", {"operation": "list_notes"})
        asked = await client.call_tool("notes_query", {"question": "What does note n2 say?"})
        tools = {t.name for t in (await client.list_tools()).tools}
        recipe = await client.call_tool("r_get_note_by_note_id", {"note_id": "n1"})
    for result in (direct, executed, asked, recipe):
        assert not result.is_error, result.content
    assert "partner_rates" not in tools  # a session with its own API: the registry is not it
    calls = partner.calls("/notes")
    assert len(calls) == 5  # direct, execute, query, the recipe's check replay, the recipe
    assert all(carried_the_session_headers(c) for c in calls), calls
    assert SESSION_TOKEN not in json.dumps(fake_llm.requests)


async def test_a_session_workflow_gives_a_registry_tool_its_own_credential_only(
    gateway: str, partner: HeaderApi
) -> None:
    headers = session(partner, **{"X-Workflow-URL": partner.document("notes.yaml")})
    async with mcp_client(gateway, headers=headers) as client:
        result = await client.call_tool("w_rates_and_notes", {"currency": "EUR"})
    assert not result.is_error, result.content
    assert result.structured_content["status"] == "succeeded", result.structured_content
    assert result.structured_content["result"] == {
        "rate": 1.08,
        "first": "n1",
        "text": "call the airline",
    }
    [rates] = partner.calls("/partner")
    assert rates.only_the_partner_credential(), rates
    own = partner.calls("/notes")
    assert len(own) == 2 and all(carried_the_session_headers(c) for c in own), own
    # The engine's key still reaches every API: one per step, set by the engine, not a session.
    keys = [c.one("idempotency-key") for c in [rates, *own]]
    assert all(keys) and len(set(keys)) == 3


async def test_a_resumed_session_run_keeps_the_rules(gateway: str, partner: HeaderApi) -> None:
    headers = session(partner, **{"X-Workflow-URL": partner.document("notes.yaml")})
    async with mcp_client(gateway, headers=headers) as client:
        first = await client.call_tool("w_approve_then_rates", {"currency": "USD"})
        waiting = first.structured_content
        assert waiting["status"] == "waiting_input", waiting
        assert partner.received == []
        done = await client.call_tool(
            "workflow.resume", {"run_id": waiting["run_id"], "values": {"go": True}}
        )
    assert done.structured_content["status"] == "succeeded", done.structured_content
    assert done.structured_content["result"] == {"rate": 1.08, "text": "book the hotel"}
    [rates] = partner.calls("/partner")
    [note] = partner.calls("/notes")
    assert rates.only_the_partner_credential(), rates
    assert carried_the_session_headers(note), note


async def test_registry_tools_use_their_own_credential_on_every_path(
    gateway: str, partner: HeaderApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(tool_call("partner_rates", {"currency": "GBP"}))
    async with mcp_client(gateway) as client:  # no X-Target-URL: the registry is the API
        direct = await client.call_tool("partner_rates", {"currency": "EUR"})
        executed = await client.call_tool(
            "api_execute", {"operation": "partner_rates", "arguments": {"currency": "USD"}}
        )
        asked = await client.call_tool("api_query", {"question": "The GBP rate of the partner"})
    for result in (direct, executed, asked):
        assert not result.is_error, result.content
    calls = partner.calls("/partner")
    assert len(calls) == 4  # direct, execute, query, and the replay that checks its recipe
    assert all(c.only_the_partner_credential() for c in calls), calls


async def test_session_headers_without_a_target_url_are_refused(
    gateway: str, partner: HeaderApi
) -> None:
    headers = {"X-Target-Headers": json.dumps(SESSION_HEADERS)}
    async with mcp_client(gateway, headers=headers) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("partner_rates", {"currency": "EUR"})
    assert refused.value.code == -32602
    message = refused.value.message
    assert "X-Target-Headers needs X-Target-URL" in message
    assert "server's credentials" in message
    paths = [v["path"] for v in refused.value.data["violations"]]  # type: ignore[index]
    assert paths == ["header:x-target-headers"]
    assert partner.received == []


async def test_headers_that_change_transport_or_identity_are_refused_by_name(
    gateway: str, partner: HeaderApi
) -> None:
    for name in REFUSED:
        headers = session(partner)
        headers["X-Target-Headers"] = json.dumps({**SESSION_HEADERS, name: "x"})
        async with mcp_client(gateway, headers=headers) as client:
            with pytest.raises(MCPError) as refused:
                await client.list_tools()
        assert refused.value.code == -32602, name
        assert f"X-Target-Headers may not set '{name}'" in refused.value.message
        violations = refused.value.data["violations"]  # type: ignore[index]
        assert [v["path"] for v in violations] == [f"header:x-target-headers.{name}"]
    assert partner.received == []
