"""GraphQL targets at their limits, against the real GraphQL server on loopback: an
introspection answer too large or nested too deep is refused naming the limit (a session start
error over MCP, 422 over REST); the endpoint's query string reaches the server on introspection
and on every call, in sessions and imported catalogs alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.graphql_api import TOKEN, GraphQLApi, running_graphql_api
from tests.support.mcp_client import mcp_client

AUTH = {"X-Target-Headers": json.dumps({"Authorization": TOKEN})}


def session(endpoint: str) -> dict[str, str]:
    return {"X-Target-URL": endpoint, "X-API-Type": "graphql", "X-API-Name": "flights", **AUTH}


async def start_error(gateway: str, endpoint: str) -> str:
    """The error a session on ``endpoint`` starts with (its tools cannot be listed)."""
    async with mcp_client(gateway, headers=session(endpoint)) as client:
        with pytest.raises(Exception) as refused:
            await client.list_tools()
    return str(getattr(refused.value, "data", None) or refused.value)


async def test_the_query_string_reaches_introspection_and_every_call(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    status = "query S($n: String!) { flightStatus(number: $n) { status } }"
    fake_llm.script(tool_call("flights_graphql", {"query": status, "variables": {"n": "KL1"}}))
    async with mcp_client(graph_gateway, headers=session(f"{graph.endpoint}?tenant=acme")) as c:
        await c.list_tools()
        field = await c.call_tool("flight", {"id": "FL-1"})
        given = await c.call_tool("flights_execute", {"query": status, "variables": {"n": "X"}})
        written = await c.call_tool("flights_query", {"question": "Status of KL1?"})
    for result in (field, given, written):
        assert not result.is_error, result.content
    operations = [operation for operation, _ in graph.seen]
    assert "__schema" in operations[0] and len(operations) == 4
    assert graph.query_strings == ["tenant=acme"] * 4


async def test_an_introspection_answer_nested_too_deep_is_refused(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    deep = await start_error(graph_gateway, f"{graph.endpoint}?shape=deep")
    wrapped = await start_error(graph_gateway, f"{graph.endpoint}?shape=wrapped")
    assert "the introspection answer is nested past 100 levels" in deep
    assert "Syntax Error" not in deep
    assert "type references nest past 16 levels (lists and non-null wrappers, at Query.flight)" in (
        wrapped
    )
    assert graph.query_strings == ["shape=deep", "shape=wrapped"]


async def test_an_introspection_answer_over_the_size_cap_names_the_limit(
    start_server: Callable[..., str], graph: GraphQLApi
) -> None:
    gateway = start_server(allowed_target_hosts=[graph.host], http_max_response_bytes=10_000)
    error = await start_error(gateway, graph.endpoint)
    assert (
        "the introspection answer is larger than the 10 kB response limit "
        "(HTTP_MAX_RESPONSE_BYTES)" in error
    )


async def test_a_credential_in_the_endpoint_url_is_refused(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    error = await start_error(graph_gateway, f"{graph.endpoint}?api_key=k-123")
    assert "'api_key' looks like a credential" in error
    assert "k-123" not in error
    assert graph.seen == []  # nothing was sent


def import_catalog(gateway: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{gateway}/catalogs", json={"name": "air", **body}, timeout=30)


async def test_an_imported_catalog_keeps_the_query_string(
    start_server: Callable[..., str],
) -> None:
    # a public API: a catalog's tools carry no session credential (only the session's own API
    # receives X-Target-Headers)
    with running_graphql_api(token=None) as public:
        gateway = start_server(allowed_target_hosts=[public.host])
        created = import_catalog(
            gateway, source=public.schema_url, base_url=f"{public.endpoint}?tenant=acme"
        )
        assert created.status_code == 201, created.text
        async with mcp_client(gateway) as client:
            result = await client.call_tool("flightStatus", {"number": "KL9"})
    assert result.structured_content["data"]["flightStatus"]["status"] == "ON_TIME"
    assert public.query_strings == ["tenant=acme"]


def test_a_catalog_import_refuses_deep_answers_with_the_limit(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    deep = import_catalog(
        graph_gateway,
        source=f"{graph.url}/introspection.json?shape=deep",
        base_url=graph.endpoint,
    )
    wrapped = import_catalog(
        graph_gateway,
        source=f"{graph.url}/introspection.json?shape=wrapped",
        base_url=graph.endpoint,
    )
    keyed = import_catalog(
        graph_gateway, source=graph.schema_url, base_url=f"{graph.endpoint}?token=t-9"
    )
    assert deep.status_code == wrapped.status_code == keyed.status_code == 422
    assert "the introspection answer is nested past 100 levels" in deep.text
    assert "type references nest past 16 levels" in wrapped.text
    assert "'token' looks like a credential" in keyed.text and "t-9" not in keyed.text
    plain = import_catalog(
        graph_gateway, source=f"{graph.url}/introspection.json", base_url=graph.endpoint
    )
    assert plain.status_code == 201, plain.text  # the same file unbroken imports
