"""BFCL conversion: types, names, tools, gold requests and flagging (bench.bfcl.convert)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from bench.bfcl.convert import (
    BASE_URL,
    SAMPLE_DIR,
    TOOL_NAME,
    GoldRequest,
    Item,
    NameMap,
    gold_arguments,
    gold_problems,
    gold_request,
    load_category,
    load_sample,
    render_scalar,
    request_diff,
    to_json_schema,
    tool_config,
    tool_name,
    variant_tool,
)
from dynamic_tools.tools.models import ToolConfig


@pytest.fixture(scope="module")
def sample() -> dict[str, list[Item]]:
    return load_sample()


def by_id(sample: dict[str, list[Item]], item_id: str) -> Item:
    return next(i for items in sample.values() for i in items if i.id == item_id)


def function(properties: dict[str, Any], required: list[str], name: str = "a.b") -> dict[str, Any]:
    return {
        "name": name,
        "description": "A function.",
        "parameters": {"type": "dict", "properties": properties, "required": required},
    }


# --- types ---------------------------------------------------------------------------------
def test_bfcl_types_map_to_json_schema_recursively() -> None:
    bfcl = {
        "type": "dict",
        "description": "outer",
        "properties": {
            "ratio": {"type": "float", "default": 0.5},
            "point": {"type": "tuple", "items": {"type": "float"}},
            "anything": {"type": "any", "description": "free"},
            "mode": {"type": "string", "enum": ["a", "b"], "optional": True},
            "tags": {"type": "array", "items": {"type": "dict", "properties": {}}},
        },
        "required": ["ratio"],
    }
    assert to_json_schema(bfcl) == {
        "type": "object",
        "description": "outer",
        "properties": {
            "ratio": {"type": "number", "default": 0.5},
            "point": {"type": "array", "items": {"type": "number"}},
            "anything": {"description": "free"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "object", "properties": {}}},
        },
        "required": ["ratio"],
    }


def test_an_enum_on_an_array_constrains_its_items() -> None:
    bfcl = {"type": "array", "items": {"type": "string"}, "enum": ["co2", "noise"]}
    assert to_json_schema(bfcl) == {
        "type": "array",
        "items": {"type": "string", "enum": ["co2", "noise"]},
    }


# --- names ---------------------------------------------------------------------------------
def test_names_map_dots_to_dashes_and_back() -> None:
    names = NameMap()
    assert names.add("math.gcd") == "math-gcd"
    assert names.add("math_gcd") == "math_gcd"  # no clash with the dotted one
    assert names.to_bfcl == {"math-gcd": "math.gcd", "math_gcd": "math_gcd"}
    assert names.to_tool["math.gcd"] == "math-gcd"


def test_long_or_odd_names_stay_valid_and_distinct() -> None:
    long_a, long_b = "x." * 40 + "a", "x." * 40 + "b"
    assert TOOL_NAME.match(tool_name(long_a))
    assert len(tool_name(long_a)) == 64
    assert tool_name(long_a) != tool_name(long_b)
    assert tool_name("get weather/now") == "get_weather_now"


def test_two_names_mapping_to_one_tool_name_are_refused() -> None:
    names = NameMap()
    names.add("a.b")
    with pytest.raises(ValueError, match="both map to tool name 'a-b'"):
        names.add("a-b")


# --- tools ---------------------------------------------------------------------------------
def test_scalar_functions_become_get_with_query_parameters() -> None:
    tool = tool_config(
        function({"n": {"type": "integer"}, "fast": {"type": "boolean"}}, ["n"]), NameMap()
    )
    assert tool["api"] == {"method": "GET", "base_url": BASE_URL, "path": "/a-b"}
    assert tool["parameters"] == {
        "n": {"type": "integer", "in": "query", "required": True},
        "fast": {"type": "boolean", "in": "query", "required": False},
    }
    ToolConfig.model_validate(tool)


def test_functions_with_structured_parameters_become_post_with_a_body() -> None:
    nested = {"type": "dict", "properties": {"k": {"type": "string"}}, "required": ["k"]}
    tool = tool_config(function({"n": {"type": "integer"}, "opts": nested}, ["opts"]), NameMap())
    assert tool["api"]["method"] == "POST"
    assert {p["in"] for p in tool["parameters"].values()} == {"body"}
    # "required" of a parameter is our flag, so a nested required list moves under allOf.
    assert tool["parameters"]["opts"]["allOf"] == [{"required": ["k"]}]
    assert tool["parameters"]["opts"]["required"] is True
    config = ToolConfig.model_validate(tool)
    assert config.input_schema()["required"] == ["opts"]


def test_every_sample_tool_loads_as_a_tool_config(sample: dict[str, list[Item]]) -> None:
    tools = [t for items in sample.values() for i in items for t in i.tools]
    assert len(tools) > 100
    for tool in tools:
        assert ToolConfig.model_validate(tool).name == tool["name"]


def test_variant_tools_move_a_plain_string_parameter_to_the_path_or_a_header() -> None:
    tool = tool_config(
        function({"mode": {"type": "string", "enum": ["a"]}, "city": {"type": "string"}}, ["mode"]),
        NameMap(),
    )
    path = ToolConfig.model_validate(variant_tool(tool, "path"))
    assert path.api.path == "/a-b/{city}"
    assert (path.parameters["city"].location, path.parameters["city"].required) == ("path", True)
    header = ToolConfig.model_validate(variant_tool(tool, "header"))
    assert (header.parameters["city"].location, header.parameters["city"].required) == (
        "header",
        False,
    )
    assert tool["parameters"]["city"]["in"] == "query"  # the original is left as it was
    numbers = tool_config(function({"n": {"type": "integer"}}, []), NameMap())
    added = ToolConfig.model_validate(variant_tool(numbers, "path"))
    assert added.api.path == "/a-b/{resource_id}"
    assert "X-Trace" in ToolConfig.model_validate(variant_tool(numbers, "header")).parameters


# --- gold answers --------------------------------------------------------------------------
def test_gold_arguments_take_the_first_value_and_omit_what_may_be_omitted() -> None:
    acceptable = {
        "city": ["Paris", "paris"],
        "unit": ["", "metric"],
        "days": [3, ""],
        "port": [5432, ""],  # required: "" would contradict the doc, 5432 does not
        "brand": ["", None],
        "start": [None],  # optional: null means the default
        "prefs": [{"size": ["large"], "milk": ["", "oat"]}],
        "items": [[{"id": ["a1"], "qty": [2]}, {"id": ["b2"], "qty": [1]}]],
    }
    assert gold_arguments(acceptable, required=["city", "port"]) == {
        "city": "Paris",
        "port": 5432,
        "prefs": {"size": "large"},
        "items": [{"id": "a1", "qty": 2}, {"id": "b2", "qty": 1}],
    }


def test_render_scalar_follows_the_request_builder_rules() -> None:
    assert [render_scalar(v) for v in (True, False, 3, 2.5, 1e-05, "a b")] == [
        "true",
        "false",
        "3",
        "2.5",
        "1e-05",
        "a b",
    ]
    assert render_scalar({"a": [1, 2]}) == '{"a":[1,2]}'


def test_gold_requests_render_query_in_doc_order_and_bodies_as_json() -> None:
    get = tool_config(
        function({"q": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "boolean"}}, []),
        NameMap(),
    )
    assert gold_request(get, {"x": True, "q": "hi there"}) == GoldRequest(
        "GET", f"{BASE_URL}/a-b", [("q", "hi there"), ("x", "true")], None
    )
    post = tool_config(function({"tags": {"type": "array", "items": {"type": "string"}}}, []),
                       NameMap())  # fmt: skip
    assert gold_request(post, {"tags": ["a", "b"]}).body == {"tags": ["a", "b"]}
    assert gold_request(post, {}).body is None
    post["parameters"]["tags"]["in"] = "query"  # lists in a query repeat the key
    assert gold_request(post, {"tags": ["a", "b"]}).query == [("tags", "a"), ("tags", "b")]


def test_a_sample_item_has_its_gold_request(sample: dict[str, list[Item]]) -> None:
    item = by_id(sample, "multiple_0")
    assert item.gold_tool == "triangle_properties-get"
    assert item.arguments == {"side1": 5, "side2": 4, "side3": 3}
    assert item.request == GoldRequest(
        "GET",
        f"{BASE_URL}/triangle_properties-get",
        [("side1", "5"), ("side2", "4"), ("side3", "3")],
        None,
    )


# --- flagging ------------------------------------------------------------------------------
def test_gold_answers_that_contradict_their_doc_are_flagged() -> None:
    tool = tool_config(
        function({"genre": {"type": "string", "enum": ["Horror"]}, "n": {"type": "integer"}},
                 ["genre"]),
        NameMap(),
    )  # fmt: skip
    assert gold_problems(tool, {"genre": ["Horror"]}, {"genre": "Horror"}) == []
    assert gold_problems(tool, {"genre": ["horror"]}, {"genre": "horror"}) == [
        "genre: 'horror' is not one of ['Horror']"
    ]
    assert gold_problems(tool, {"genre": [""]}, {}) == [
        "required parameter 'genre' is missing or may be omitted"
    ]
    assert gold_problems(tool, {"genre": ["Horror"], "x": [1]}, {"genre": "Horror", "x": 1}) == [
        "unknown parameter 'x'"
    ]
    assert gold_problems(
        tool, {"genre": ["Horror"], "n": ["2"]}, {"genre": "Horror", "n": "2"}
    ) == ["n: '2' is not of type 'integer'"]
    assert gold_problems(None, {}, {}) == ["the gold function is not among the item's functions"]


def test_the_sample_flags_exactly_its_contradicting_item(sample: dict[str, list[Item]]) -> None:
    assert {c: len(items) for c, items in sample.items()} == {"multiple": 25, "live_multiple": 25}
    flagged = [i for items in sample.values() for i in items if i.flagged]
    assert [i.id for i in flagged] == ["live_multiple_756-169-11"]
    assert flagged[0].problems[0].startswith("genre: 'horror' is not one of")
    assert flagged[0].request is None


def test_a_nested_open_object_item_is_not_flagged() -> None:
    (item,) = load_category(
        SAMPLE_DIR / "open_nested_object.jsonl",
        SAMPLE_DIR / "open_nested_object_answers.jsonl",
        "live_multiple",
    )
    assert not item.flagged
    assert item.arguments["data"] == {"name": "John Doe", "email": "john.doe@example.com"}


# --- comparison ----------------------------------------------------------------------------
def sent(method: str, url: str, body: Any = None) -> httpx.Request:
    return httpx.Request(method, url, json=body) if body is not None else httpx.Request(method, url)


def test_request_diff_is_empty_only_for_the_same_request() -> None:
    gold = GoldRequest("GET", f"{BASE_URL}/t", [("q", "a b+c"), ("q", "2")], None)
    assert request_diff(gold, sent("GET", f"{BASE_URL}/t?q=a%20b%2Bc&q=2")) == []
    assert request_diff(gold, sent("GET", f"{BASE_URL}/t?q=2&q=a%20b%2Bc")) != []  # order
    assert request_diff(gold, sent("GET", f"{BASE_URL}/t?q=a+b+c&q=2")) == [
        "query: expected [('q', 'a b+c'), ('q', '2')], sent [('q', 'a b c'), ('q', '2')]"
    ]
    post = GoldRequest("POST", f"{BASE_URL}/t", [], {"x": 1.0, "ok": True})
    assert request_diff(post, sent("POST", f"{BASE_URL}/t", {"ok": True, "x": 1.0})) == []
    assert request_diff(post, sent("POST", f"{BASE_URL}/t", {"ok": 1, "x": 1})) == [
        f"body: expected {json.dumps({'ok': True, 'x': 1.0})!r}, "
        f"sent {json.dumps({'ok': 1, 'x': 1})!r}"
    ]
    wrong_type = httpx.Request(
        "POST", f"{BASE_URL}/t", content=b'{"x": 1.0, "ok": true}',
        headers={"content-type": "text/plain"},
    )  # fmt: skip
    assert request_diff(post, wrong_type) == ["content-type: 'text/plain' for a JSON body"]
