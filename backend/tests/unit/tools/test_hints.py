import json

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.hints import (
    MAX_HINTS_CHARS,
    describe_tool,
    hint_block,
    merge_hints,
    parse_tool_hints,
)
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES

# The seed's X-Tool-Hints example (docs/design-sources.md#tool-discovery-design, strategy 1).
SEED_HEADER = {
    "search_flights": {
        "category": "search",
        "outputs": ["flight_id", "airline", "price", "departure", "arrival"],
        "next": ["check_availability"],
        "hint": "Always search before booking. "
        "Results contain flight_id needed by downstream tools.",
    },
    "check_availability": {
        "category": "validation",
        "requires": ["search_flights"],
        "outputs": ["seats_available", "cabin_class"],
        "next": ["create_booking", "add_to_waitlist"],
        "hint": "Requires flight_id from search_flights. Must confirm availability before booking.",
    },
}


def tool(
    name: str = "search_flights", description: str = "Search available flights."
) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": description,
            "api": {"method": "GET", "base_url": "https://flights.example.com", "path": "/f"},
            "hints": {"category": "read", "outputs": ["old"], "hint": "registry hint"},
        }
    )


@pytest.fixture(scope="module")
def travel() -> dict[str, ToolConfig]:
    registry = ToolRegistry(EXAMPLES / "tools", variables={"PUBLIC_BASE_URL": "http://127.0.0.1:1"})
    assert registry.reload() == []
    return {t.name: t for t in registry.all()}


def violation_of(exc: pytest.ExceptionInfo[InvalidInputError]) -> dict[str, object]:
    assert exc.value.violations, exc.value.message
    return exc.value.violations[0]


def test_parses_the_seed_header_as_an_object_or_as_a_json_string() -> None:
    direct = parse_tool_hints(json.dumps(SEED_HEADER))
    twice = parse_tool_hints(json.dumps(json.dumps(SEED_HEADER)))
    assert direct == twice
    assert direct["check_availability"].next == ["create_booking", "add_to_waitlist"]
    assert direct["search_flights"].model_fields_set == {"category", "outputs", "next", "hint"}
    assert parse_tool_hints(SEED_HEADER) == direct
    assert parse_tool_hints(None) == {} and parse_tool_hints("  ") == {}


def test_hint_block_is_exactly_the_seeds_tree() -> None:
    hints = parse_tool_hints(SEED_HEADER)
    assert hint_block(hints["check_availability"]) == (
        "  ├─ Category: validation\n"
        "  ├─ Requires: search_flights\n"
        "  ├─ Outputs: seats_available, cabin_class\n"
        "  ├─ Next: create_booking, add_to_waitlist\n"
        "  └─ Hint: Requires flight_id from search_flights. "
        "Must confirm availability before booking."
    )
    described = describe_tool(
        tool(), hints["search_flights"], api_label="flights.example.com GraphQL API"
    )
    assert described == (
        "[flights.example.com GraphQL API] Search available flights.\n"
        "  ├─ Category: search\n"
        "  ├─ Outputs: flight_id, airline, price, departure, arrival\n"
        "  ├─ Next: check_availability\n"
        "  └─ Hint: Always search before booking. Results contain flight_id needed by "
        "downstream tools."
    )


def test_only_present_fields_are_shown_and_the_last_uses_the_corner() -> None:
    assert hint_block(ToolHints(requires=["a"])) == "  └─ Requires: a"
    assert hint_block(ToolHints()) == ""
    assert describe_tool(tool(), ToolHints(), api_label=None) == "Search available flights."
    assert hint_block(ToolHints(category="search", hint="Two\n  lines")) == (
        "  ├─ Category: search\n  └─ Hint: Two lines"
    )


def test_real_travel_tool_description(travel: dict[str, ToolConfig]) -> None:
    text = describe_tool(
        travel["create_booking"], travel["create_booking"].hints, api_label="travel API"
    )
    lines = text.split("\n")
    assert lines[0].startswith("[travel API] Reserve one seat on a flight for one passenger.")
    assert lines[1:] == [
        "  ├─ Category: action",
        "  ├─ Requires: check_availability",
        "  ├─ Outputs: id, price, status",
        "  ├─ Next: process_payment",
        "  └─ Hint: Only call after check_availability confirms seats. Returns the booking id for "
        "payment.",
    ]


def test_header_hints_override_the_registry_field_by_field() -> None:
    override = parse_tool_hints({"search_flights": {"category": "search", "requires": []}})
    merged = merge_hints(tool(), override["search_flights"])
    assert merged.category == "search"  # overridden
    assert merged.requires == []  # set explicitly (the registry had none either)
    assert merged.outputs == ["old"] and merged.hint == "registry hint"  # kept
    cleared = merge_hints(
        tool(), parse_tool_hints({"search_flights": {"hint": None}})["search_flights"]
    )
    assert cleared.hint is None and cleared.category == "read"
    assert merge_hints(tool(), None) == tool().hints


def test_bad_json_is_refused_with_its_position() -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_tool_hints('{"search_flights": {"category": "search",}}')
    v = violation_of(exc)
    assert v["rule"] == "json" and "line 1" in str(v["message"])
    assert v["header"] == "X-Tool-Hints"
    assert exc.value.to_dict()["error_code"] == "invalid_input"


@pytest.mark.parametrize(
    ("value", "path", "field", "rule"),
    [
        (
            {"search_flights": {"categroy": "search"}},
            "search_flights.categroy",
            "categroy",
            "unknown_key",
        ),
        (
            {"search_flights": {"examples": "Flights to BCN"}},
            "search_flights.examples",
            "examples",
            "type",
        ),
        ({"search_flights": {"requires": "check"}}, "search_flights.requires", "requires", "type"),
        (
            {"search_flights": {"outputs": ["id", 3]}},
            "search_flights.outputs[1]",
            "outputs",
            "type",
        ),
        (
            {"search_flights": {"next": ["no spaces"]}},
            "search_flights.next[0]",
            "next",
            "tool_name",
        ),
        ({"search_flights": {"hint": 42}}, "search_flights.hint", "hint", "type"),
        ({"search_flights": {"category": ""}}, "search_flights.category", "category", "empty"),
        ({"search_flights": ["search"]}, "search_flights", None, "type"),
        ({"bad name!": {}}, "bad name!", None, "tool_name"),
    ],
)
def test_each_format_error_names_the_tool_and_field(
    value: dict[str, object], path: str, field: str | None, rule: str
) -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_tool_hints(json.dumps(value))
    v = violation_of(exc)
    assert (v["path"], v["field"], v["rule"]) == (path, field, rule)
    assert v["tool"] == next(iter(value))
    assert path in exc.value.message


def test_every_violation_is_listed_at_once() -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_tool_hints({"a": {"oops": 1, "next": [1]}, "b": {"hint": []}})
    assert [v["path"] for v in exc.value.violations] == ["a.oops", "a.next[0]", "b.hint"]


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("[1, 2]", "type"),
        ('"just text"', "json"),
        ("x" * (MAX_HINTS_CHARS + 1), "size"),
        (json.dumps({f"t{i}": {} for i in range(501)}), "size"),
        (json.dumps({"t": {"outputs": ["o"] * 65}}), "size"),
        (b"\xff\xfe", "encoding"),
    ],
)
def test_shape_and_size_limits(value: str | bytes, rule: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_tool_hints(value)
    assert violation_of(exc)["rule"] == rule
