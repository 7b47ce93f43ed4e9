"""Tool configs nested too deep: a load problem or a field error, never a RecursionError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema.exceptions import SchemaError
from pydantic import ValidationError

from dynamic_tools.tools.loader import load_file
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.schema_check import MAX_SCHEMA_DEPTH, check_schema
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
