"""Tool configs nested too deep: a load problem or a field error, never a RecursionError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema.exceptions import SchemaError
from pydantic import ValidationError

from dynamic_tools.tools.loader import load_file
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.schema_check import MAX_SCHEMA_DEPTH, check_schema, remembering
from tests.support.hostile import nested_json


def _items(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def test_a_schema_within_the_limit_passes_and_one_past_it_names_the_path() -> None:
    check_schema(_items(MAX_SCHEMA_DEPTH - 1))
    with pytest.raises(SchemaError) as caught:
        check_schema(_items(MAX_SCHEMA_DEPTH + 5))
    assert f"nested deeper than {MAX_SCHEMA_DEPTH} levels" in caught.value.message
    assert "items.items" in caught.value.message


def test_the_limit_is_exact_for_schema_levels_and_for_a_keyword_value() -> None:
    check_schema(_items(MAX_SCHEMA_DEPTH - 1))  # MAX_SCHEMA_DEPTH dicts
    with pytest.raises(SchemaError, match="nested deeper"):
        check_schema(_items(MAX_SCHEMA_DEPTH))
    value: Any = []
    for _ in range(MAX_SCHEMA_DEPTH - 2):
        value = [value]  # MAX_SCHEMA_DEPTH - 1 lists
    check_schema({"type": "array", "default": value})
    with pytest.raises(SchemaError, match="nested deeper"):
        check_schema({"type": "array", "default": [value]})


def test_a_remembered_sub_schema_still_counts_where_it_is_used_again() -> None:
    shared = _items(50)  # 51 deep, checked once on its own
    with remembering():
        check_schema(shared)
        deep = shared
        for _ in range(MAX_SCHEMA_DEPTH - 51):
            deep = {"type": "array", "items": deep}
        check_schema(deep)  # exactly at the limit
        with pytest.raises(SchemaError) as caught:
            check_schema({"type": "object", "properties": {"a": deep}})
        assert "properties.a.items" in caught.value.message
        with pytest.raises(SchemaError):  # an invalid one is not remembered as valid
            check_schema({"allOf": [shared, {"type": "file"}]})
        check_schema({"allOf": [shared, {"type": "string"}]})


def test_a_tool_with_a_200_level_parameter_schema_is_a_field_error() -> None:
    data = {
        "name": "deep",
        "description": "d",
        "api": {"method": "POST", "base_url": "https://api.example.com", "path": "/x"},
        "parameters": {"p": {"in": "body", **_items(200)}},
    }
    with pytest.raises(ValidationError) as caught:
        ToolConfig.model_validate(data)
    error = caught.value.errors()[0]
    assert error["loc"] == ("parameters", "p")
    assert "nested deeper than" in error["msg"]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_tool_file_nested_10000_deep_is_a_load_problem(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(nested_json(10_000))
    result = load_file(path)
    assert result.tools == []
    assert result.problems[0].field == "(document)"
    assert "nested deeper than 128 levels" in result.problems[0].reason
