"""A session's GraphQL introspection: an answer cut at the response size cap, nested too deep or
not JSON is refused saying so (never read as SDL); the endpoint's query string is sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from graphql import graphql_sync
from pytest_httpx import HTTPXMock

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.mcp.session_sources import SessionSources, _size
from dynamic_tools.tools.graphql import INTROSPECTION_QUERY, compiled_schema
from tests.support.graphql_api import SDL, broken_introspection

ENDPOINT = "https://api.example/graphql"
SCHEMA = compiled_schema(SDL)
JSON = {"content-type": "application/json"}


@pytest.fixture
async def sources() -> AsyncIterator[SessionSources]:
    guard = TargetGuard(["api.example"])
    async with httpx.AsyncClient() as client:
        fetcher = DocumentFetcher(client=client, guard=guard, local_roots=[])
        sender = HttpSender(client, guard, max_response_bytes=5_000_000)
        yield SessionSources(fetcher, sender=sender)


async def refusal(sources: SessionSources, endpoint: str = ENDPOINT) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as refused:
        await sources.graphql(endpoint, {}, None)
    return refused.value


async def test_an_answer_cut_at_the_size_cap_names_the_limit(
    httpx_mock: HTTPXMock, sources: SessionSources
) -> None:
    huge = json.dumps({"data": {"__schema": {"description": "x" * 5_000_100}}})
    httpx_mock.add_response(url=ENDPOINT, text=huge, headers=JSON)
    error = await refusal(sources)
    assert error.message.startswith(
        "the GraphQL schema could not be read: the introspection answer is larger than the "
        "5 MB response limit (HTTP_MAX_RESPONSE_BYTES)"
    )
    assert error.violations[0]["path"] == "header:x-target-url"
    assert error.violations[0]["rule"] == "max_size"


async def test_an_answer_nested_past_the_senders_depth_is_refused_as_too_deep(
    httpx_mock: HTTPXMock, sources: SessionSources
) -> None:
    deep = {"data": broken_introspection(SCHEMA, "deep")}
    httpx_mock.add_response(url=ENDPOINT, json=deep)  # the sender keeps it as text
    error = await refusal(sources)
    assert error.message.startswith("the introspection answer is nested past 100 levels (at ")
    assert error.violations[0] == {
        "path": "header:x-target-url",
        "rule": "depth",
        "message": error.message,
    }


async def test_an_answer_that_is_not_json_is_not_read_as_sdl(
    httpx_mock: HTTPXMock, sources: SessionSources
) -> None:
    httpx_mock.add_response(url=ENDPOINT, text="type Query { a: Int }")
    error = await refusal(sources)
    assert error.message.startswith("the introspection answer is not JSON (")


async def test_the_endpoint_query_string_is_sent_and_kept_by_the_tools(
    httpx_mock: HTTPXMock, sources: SessionSources
) -> None:
    answer = graphql_sync(SCHEMA, INTROSPECTION_QUERY)
    httpx_mock.add_response(url=f"{ENDPOINT}?mode=x", json={"data": answer.data})
    api = await sources.graphql(f"{ENDPOINT}?mode=x", {}, None)
    assert api.tools["flight"].static_params.query == {"mode": "x"}
    assert api.tools["flight"].api.path == "/graphql"


async def test_a_credential_in_the_endpoint_query_string_is_refused_before_sending(
    sources: SessionSources,
) -> None:
    error = await refusal(sources, f"{ENDPOINT}?access_token=t0k")
    assert error.violations[0]["path"] == "header:x-target-url"
    assert error.violations[0]["rule"] == "credential"
    assert "'access_token' looks like a credential" in error.message


def test_limits_are_named_in_readable_units() -> None:
    sizes = [5_000_000, 1_500_000, 20_000, 10_500, 1024]
    assert [_size(n) for n in sizes] == ["5 MB", "1.5 MB", "20 kB", "10.5 kB", "1024 bytes"]
