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
    assert params["properties"]["units"] == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert params["properties"]["when"] == {"type": ["string", "null"], "format": "date"}
    Draft202012Validator.check_schema(params)


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
    address = nested["properties"]["address"]
    assert address["additionalProperties"] is False
    assert address["required"] == ["zip"] and address["properties"]["zip"] == {
        "type": ["string", "null"]
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
