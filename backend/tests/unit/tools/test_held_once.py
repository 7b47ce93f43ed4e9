"""A tool's schema is held once: the input schema is built on first use and shared, the
parameters' schemas are not copied into it, tool files share their names and short words, and
tools without static params, auth, hints or annotations share the empty ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dynamic_tools.mcp.api_tools import api_tool
from dynamic_tools.tools.loader import SHARED_MAX_CHARS, load_directory, shared_strings
from dynamic_tools.tools.models import ToolConfig


def tool(name: str = "get_item", **overrides: Any) -> ToolConfig:
    data: dict[str, Any] = {
        "name": name,
        "description": "Get one item",
        "api": {"method": "GET", "base_url": "https://items.example/v1", "path": "/items/{id}"},
        "parameters": {
            "id": {"type": "string", "in": "path", "required": True},
            "fields": {"type": "array", "items": {"type": "string"}},
        },
    }
    data.update(overrides)
    return ToolConfig.model_validate(data)


def test_the_input_schema_is_built_once_and_shared() -> None:
    config = tool()
    schema = config.input_schema()
    assert config.input_schema() is schema
    assert schema["properties"]["fields"] is config.parameters["fields"].held
    assert schema == {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "fields": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
        "required": ["id"],
    }


def test_a_copy_with_other_parameters_builds_its_own_schema() -> None:
    config = tool()
    built = config.input_schema()
    renamed = config.model_copy(update={"name": "other"})
    assert renamed.input_schema() is built  # same parameters, same content type
    narrower = config.model_copy(update={"parameters": {"id": config.parameters["id"]}})
    assert narrower.input_schema()["properties"] == {"id": {"type": "string"}}
    assert config.input_schema() is built


def test_the_kept_schema_changes_no_dump_comparison_or_copy_of_the_tool() -> None:
    built, fresh = tool(), tool()
    built.input_schema()
    assert built == fresh
    assert built.model_dump() == fresh.model_dump()
    assert built.model_dump_json() == fresh.model_dump_json()
    assert repr(built) == repr(fresh)
    assert built.parameters["id"].schema_ is not built.parameters["id"].held  # still a copy


def test_tools_without_extras_share_the_empty_ones_and_still_dump_as_before() -> None:
    first, second = tool("a"), tool("b")
    assert first.static_params is second.static_params
    assert first.auth is second.auth
    assert first.hints is second.hints
    assert first.annotations is second.annotations
    assert "hints" not in first.model_dump(exclude_unset=True)
    given = tool("c", hints={"category": "items"})
    assert given.hints.category == "items" and first.hints.category is None


def test_tool_files_share_their_keys_and_short_strings(tmp_path: Path) -> None:
    long_text = "x" * (SHARED_MAX_CHARS + 1)
    for name in ("first", "second"):
        (tmp_path / f"{name}.yaml").write_text(
            f"name: {name}\n"
            f"description: {long_text}\n"
            "api: {method: GET, base_url: 'https://items.example', path: /items}\n"
            "parameters:\n"
            "  colour: {type: string, enum: [red, green]}\n",
            encoding="utf-8",
        )
    first, second = (loaded.config for loaded in load_directory(tmp_path).tools)
    one, two = first.parameters["colour"].held, second.parameters["colour"].held
    assert one == two == {"type": "string", "enum": ["red", "green"]}
    assert next(iter(one)) is next(iter(two))  # the key "type"
    assert one["type"] is two["type"] and one["enum"][0] is two["enum"][0]
    assert first.description == second.description == long_text
    assert first.description is not second.description  # long texts are left as they are


def test_shared_strings_keeps_the_document_as_it_was() -> None:
    document = {"a": [1, 2.5, True, None, "b", {"c": "d" * 100}], 3: "e"}
    assert shared_strings(document) == document


def test_tools_with_the_same_hints_share_their_mcp_annotations() -> None:
    first, second = tool("a"), tool("b")
    post = tool(
        "c",
        api={"method": "POST", "base_url": "https://items.example", "path": "/x"},
        parameters={},
    )
    assert (
        api_tool(first, description="a").annotations
        is api_tool(second, description="b").annotations
    )
    assert api_tool(post, description="c").annotations.read_only_hint is False
