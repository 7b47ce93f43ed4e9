from typing import Any

from jsonschema import Draft202012Validator

from dynamic_tools.selection.function_schema import (
    drop_nulls_for_optional,
    function_for_tool,
    to_strict,
)
from dynamic_tools.tools.models import ToolConfig


def tool(parameters: dict[str, Any]) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": "t",
            "description": "d",
            "api": {"method": "POST", "base_url": "https://x.example", "path": "/t"},
            "parameters": parameters,
        }
    )


def test_optional_properties_become_nullable_and_required() -> None:
    spec = function_for_tool(
        tool(
            {
                "city": {"type": "string", "in": "body", "required": True, "minLength": 2},
                "units": {"type": "string", "in": "body", "enum": ["c", "f"], "default": "c"},
                "when": {"type": "string", "format": "date", "in": "body"},
            }
        )
    )
    assert spec.strict
    params = spec.parameters
    assert params["required"] == ["city", "units", "when"]
    assert params["additionalProperties"] is False
    assert params["properties"]["city"] == {"type": "string"}
    # nullable as anyOf, the form grammar converters keep whole (enum, pattern, format)
    assert params["properties"]["units"] == {
        "anyOf": [{"type": "string", "enum": ["c", "f"]}, {"type": "null"}]
    }
    assert params["properties"]["when"] == {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]
    }
    Draft202012Validator.check_schema(params)
    # where strict mode is not enforced, the tool's own schema goes: optional stays optional
    loose = spec.to_openai(strict=False)["function"]
    assert "strict" not in loose
    assert loose["parameters"]["required"] == ["city"]
    assert loose["parameters"]["properties"]["units"]["enum"] == ["c", "f"]
    assert spec.to_openai()["function"]["strict"] is True


def test_closed_nested_objects_stay_strict_and_open_ones_fall_back() -> None:
    closed = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"zip": {"type": "string"}},
    }
    nested = to_strict(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "address": closed,
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        }
    )
    assert nested is not None
    address = nested["properties"]["address"]["anyOf"][0]  # optional: object or null
    assert nested["properties"]["address"]["anyOf"][1] == {"type": "null"}
    assert address["additionalProperties"] is False
    assert address["required"] == ["zip"] and address["properties"]["zip"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}]
    }
    # An object not declared closed accepts extra keys, which strict mode would forbid.
    open_address = {"type": "object", "properties": {"zip": {"type": "string"}}}
    assert (
        to_strict(
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"address": open_address},
            }
        )
        is None
    )
    assert to_strict({"type": "object", "properties": {"meta": {"type": "object"}}}) is None
    assert to_strict({"type": "object", "properties": {"x": {}}}) is None
    spec = function_for_tool(tool({"meta": {"type": "object", "in": "body"}}))
    assert not spec.strict and spec.parameters["properties"]["meta"] == {"type": "object"}


def test_nulls_for_optional_properties_are_dropped_recursively() -> None:
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string"},
            "o": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
    }
    assert drop_nulls_for_optional({"a": None, "b": None, "o": {"x": None}}, schema) == {
        "a": None,
        "o": {},
    }
