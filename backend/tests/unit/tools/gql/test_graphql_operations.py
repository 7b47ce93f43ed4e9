"""GraphQL schemas and operations from outside: parsed, validated and bounded, every problem
named with its place; root fields as tools."""

from __future__ import annotations

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.graphql import (
    check_operation,
    compiled_schema,
    root_field_tools,
    schema_from_introspection,
    schema_from_sdl,
)
from dynamic_tools.tools.graphql.operations import MAX_DEPTH
from tests.support.graphql_api import SDL

SCHEMA = compiled_schema(SDL)
RICH = """
enum Cabin { ECONOMY BUSINESS }
input Filter { cabin: Cabin, max: Float, near: Filter }
type Query { search(filter: Filter!, limit: Int = 5, cabins: [Cabin!]): [String!]! }
"""


def refusal(query: str, **options: object) -> dict[str, object]:
    with pytest.raises(InvalidInputError) as refused:
        check_operation(SCHEMA, query, **options)  # type: ignore[arg-type]
    return refused.value.violations[0]


def test_a_valid_query_names_its_kind_and_root_fields() -> None:
    checked = check_operation(
        SCHEMA, 'query { flight(id: 1) { id } flightStatus(number: "2") { status } }'
    )
    assert checked.kind == "query" and checked.root_fields == ("flight", "flightStatus")


def test_errors_name_the_argument_the_rule_and_the_place() -> None:
    unknown = refusal("{\n  flightz { id }\n}")
    assert unknown["path"] == "query" and unknown["rule"] == "graphql"
    assert (unknown["line"], unknown["column"]) == (2, 3)
    assert refusal("{ flight(id: ")["rule"] == "graphql"
    assert refusal("   ")["rule"] == "type"
    assert refusal(42)["rule"] == "type"  # type: ignore[arg-type]


def test_depth_is_bounded_even_through_fragments() -> None:
    assert check_operation(SCHEMA, "{ flight(id: 1) { id airline } }").kind == "query"
    nested = "{ a " * (MAX_DEPTH + 5) + "}" * (MAX_DEPTH + 5)
    assert refusal(nested)["rule"] == "depth"
    # a fragment bomb: 30 fragments each spreading the next twice (2^30 paths if walked naively)
    fragments = "".join(
        f"fragment F{i} on Flight {{ ...F{i + 1} ...F{i + 1} }}\n" for i in range(30)
    )
    bomb = "{ flight(id: 1) { ...F0 } }\n" + fragments + "fragment F30 on Flight { id }"
    checked = check_operation(SCHEMA, bomb)  # measured once per fragment: answers at once
    assert checked.root_fields == ("flight",)
    very_deep = "{" * 5000 + "}" * 5000  # past the parser's recursion: refused, not a crash
    assert refusal(very_deep)["rule"] in ("depth", "graphql")


def test_mutations_need_a_matching_pattern_and_subscriptions_are_refused() -> None:
    mutation = 'mutation { createBooking(flightId: "FL-1", passenger: "A") { id } }'
    refused = refusal(mutation)
    assert refused["rule"] == "unsafe" and refused["expected"] == ["createBooking"]
    assert check_operation(SCHEMA, mutation, allow_mutations=["create*"]).kind == "mutation"
    assert check_operation(SCHEMA, mutation, allow_mutations=["*"]).kind == "mutation"
    several = "query A { flight(id: 1) { id } } query B { flight(id: 2) { id } }"
    assert refusal(several)["path"] == "operationName"
    assert check_operation(SCHEMA, several, operation_name="B").kind == "query"


def test_schemas_from_outside_are_checked() -> None:
    with pytest.raises(InvalidInputError) as bad:
        schema_from_sdl("type Query {\n  a: Nope\n}")
    assert "Nope" in bad.value.message
    with pytest.raises(InvalidInputError) as broken:
        schema_from_sdl("type Query {")
    assert broken.value.violations[0]["line"] == 1
    with pytest.raises(InvalidInputError) as not_graphql:
        schema_from_introspection({"data": {"hello": 1}})
    assert not_graphql.value.violations[0]["rule"] == "introspection"
    with pytest.raises(InvalidInputError) as errors:
        schema_from_introspection({"errors": [{"message": "introspection is disabled"}]})
    assert "introspection is disabled" in errors.value.message


def test_root_fields_become_tools_with_json_schema_parameters() -> None:
    tools = {t.name: t for t in root_field_tools(schema_from_sdl(RICH), "https://x.example/gql")}
    search = tools["search"]
    schema = search.input_schema()
    assert schema["required"] == ["filter"]  # limit has a default; cabins is nullable
    assert schema["properties"]["cabins"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["ECONOMY", "BUSINESS"]},
    }
    near = schema["properties"]["filter"]["properties"]["near"]  # recursive input: bounded
    assert near["type"] == "object"
    assert search.graphql is not None
    assert search.graphql.document == (  # an unset $limit leaves the field's default (5)
        "query Search($filter: Filter!, $limit: Int, $cabins: [Cabin!]) "
        "{ search(filter: $filter, limit: $limit, cabins: $cabins) }"
    )
    assert (search.api.base_url, search.api.path) == ("https://x.example", "/gql")
