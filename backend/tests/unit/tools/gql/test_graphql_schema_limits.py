"""GraphQL schemas from outside are bounded before graphql-core recurses over them (JSON depth,
type-reference depth, the parser's nesting), each refusal naming its limit; an endpoint's query
string is kept on every call, merged with the other query parameters."""

from __future__ import annotations

import json

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.http.request_builder import build_request
from dynamic_tools.http.sender import MAX_RESPONSE_DEPTH
from dynamic_tools.tools.graphql import (
    compiled_schema,
    endpoint_parts,
    free_query_tool,
    introspection_answer,
    root_field_tools,
    schema_from_introspection,
    schema_from_sdl,
    schema_sdl,
)
from dynamic_tools.tools.graphql.catalog import convert_graphql
from dynamic_tools.tools.graphql.schema import MAX_INTROSPECTION_DEPTH, MAX_TYPE_DEPTH
from dynamic_tools.tools.models import AuthSpec
from dynamic_tools.tools.openapi import ConversionOptions
from tests.support.graphql_api import SDL, broken_introspection
from tests.support.hostile import nested_json

SCHEMA = compiled_schema(SDL)
ENDPOINT = "https://api.example/graphql"


def refused(call: object, *args: object) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def wrapped(levels: int) -> str:
    """``String`` inside ``levels`` list wrappers."""
    return "[" * levels + "String" + "]" * levels


def test_the_limit_matches_the_senders() -> None:
    # an answer the sender parsed is never refused for its depth here, and one it kept as
    # text because of its depth is refused here with the same number
    assert MAX_INTROSPECTION_DEPTH == MAX_RESPONSE_DEPTH


def test_an_introspection_answer_nested_too_deep_is_refused_with_the_limit() -> None:
    deep = {"data": broken_introspection(SCHEMA, "deep")}
    error = refused(schema_from_introspection, deep)
    assert error.message.startswith("the introspection answer is nested past 100 levels (at ")
    assert error.violations[0]["rule"] == "depth"
    as_text = refused(introspection_answer, json.dumps(deep))
    assert "nested past 100 levels" in as_text.message
    bomb = refused(introspection_answer, nested_json(10_000))  # past Python's own recursion
    assert bomb.message == "the introspection answer is nested past 100 levels"


def test_text_that_is_not_json_is_not_an_introspection_answer() -> None:
    error = refused(introspection_answer, '"data" is not here')
    assert error.message.startswith("the introspection answer is not JSON (")
    assert error.violations[0]["rule"] == "introspection"


def test_type_references_wrapped_too_deep_are_refused_with_the_limit() -> None:
    answer = {"data": broken_introspection(SCHEMA, "wrapped")}  # 30 wrappers, JSON ~40 deep
    error = refused(schema_from_introspection, answer)
    assert error.message == (
        f"the introspection answer's type references nest past {MAX_TYPE_DEPTH} levels "
        "(lists and non-null wrappers, at Query.flight)"
    )
    sdl = f"type Query {{ a(x: {wrapped(MAX_TYPE_DEPTH + 1)}): String }}"
    too_deep = refused(schema_from_sdl, sdl)
    assert too_deep.message == (
        "the GraphQL schema's type references nest past 16 levels (lists and non-null "
        "wrappers, at Query.a(x:))"
    )
    inputs = f"input F {{ v: {wrapped(20)} }} type Query {{ a(f: F): Int }}"
    assert "at F.v)" in refused(schema_from_sdl, inputs).message
    fine = schema_from_sdl(f"type Query {{ a: {wrapped(MAX_TYPE_DEPTH)} }}")
    assert schema_from_sdl(schema_sdl(fine)) is not None


def test_a_malformed_introspection_answer_is_refused_not_a_crash() -> None:
    answer = broken_introspection(SCHEMA, "")
    answer["__schema"]["directives"] = "not a list"
    error = refused(schema_from_introspection, {"data": answer})
    assert error.message.startswith("the introspection answer does not describe a schema: ")


def test_sdl_nested_past_the_parser_is_refused_not_a_recursion_error() -> None:
    for levels in (250, 5_000):
        error = refused(schema_from_sdl, f"type Query {{ a: {wrapped(levels)} }}")
        assert "nested too deeply" in error.message
        assert error.violations[0]["line"] == 1


def test_a_catalog_refuses_deep_answers_and_credentials_in_the_endpoint() -> None:
    options = ConversionOptions(base_url=ENDPOINT)
    deep = convert_graphql(json.dumps(broken_introspection(SCHEMA, "deep")).encode(), options)
    assert [(v.rule, v.message[:55]) for v in deep.violations] == [
        ("depth", "the introspection answer is nested past 100 levels (at ")
    ]
    bomb = convert_graphql(b'{"__schema": ' + nested_json(10_000).encode() + b"}", options)
    assert bomb.violations[0].message == "the introspection answer is nested past 100 levels"
    keyed = convert_graphql(SDL.encode(), ConversionOptions(base_url=f"{ENDPOINT}?api_key=k1"))
    assert [(v.path, v.rule) for v in keyed.violations] == [("base_url", "credential")]
    assert "'api_key' looks like a credential" in keyed.violations[0].message
    kept = convert_graphql(SDL.encode(), ConversionOptions(base_url=f"{ENDPOINT}?mode=x&v="))
    assert kept.valid and kept.tools[0].static_params.query == {"mode": "x", "v": ""}


def test_the_endpoint_query_string_is_kept_apart_and_checked() -> None:
    parts = endpoint_parts(f"{ENDPOINT}?mode=x&region=eu#top")
    assert (parts.base_url, parts.path, parts.query) == (
        "https://api.example",
        "/graphql",
        {"mode": "x", "region": "eu"},
    )
    twice = refused(endpoint_parts, f"{ENDPOINT}?a=1&a=2")
    assert twice.violations[0] == {
        "path": "endpoint",
        "rule": "query_string",
        "message": "the endpoint URL's query string names 'a' twice; name each parameter once",
    }
    assert refused(endpoint_parts, f"{ENDPOINT}?token=t").violations[0]["rule"] == "credential"


def test_every_call_sends_the_endpoint_query_string_with_its_other_parameters() -> None:
    endpoint = f"{ENDPOINT}?mode=x"
    field_tool = next(t for t in root_field_tools(SCHEMA, endpoint) if t.name == "flight")
    free = free_query_tool("api_execute", endpoint, SDL, description="d", allow_mutations=[])
    keyed = field_tool.model_copy(
        update={
            "auth": AuthSpec.model_validate(
                {"type": "api_key", "in": "query", "name": "key", "secret": "secret:GQL"}
            )
        }
    )
    secret = {"GQL": "gql-secret-1"}.get
    for tool, arguments in (
        (field_tool, {"id": "FL-1"}),
        (free, {"query": "{ flight(id: 1) { id } }"}),
    ):
        request = build_request(tool, arguments, secret=secret)
        assert (request.url, request.query) == (ENDPOINT, [("mode", "x")])
    merged = build_request(keyed, {"id": "FL-1"}, secret=secret)
    assert merged.query == [("mode", "x"), ("key", "gql-secret-1")]
    assert merged.http_spec()["query_params"] == {"mode": "x", "key": "***"}
