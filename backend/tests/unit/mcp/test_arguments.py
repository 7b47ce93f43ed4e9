"""``check_arguments``: the schema's violations and a tool's own checks come in one answer."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.arguments import check_arguments

TOOL = types.Tool(
    name="w_search",
    input_schema={
        "type": "object",
        "properties": {
            "cabin": {"type": "string", "enum": ["economy"]},
            "date": {"type": "string"},
        },
        "required": ["date"],
        "additionalProperties": False,
    },
)


def own(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if "cabin" in arguments:  # the schema says it first
        found.append({"path": "cabin", "rule": "enum", "message": "again"})
    if arguments.get("date") == "2026-13-45":
        found.append({"path": "date", "rule": "format", "message": "not a date"})
    return found


def test_the_tools_own_checks_come_with_the_schemas() -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_arguments(TOOL, {"cabin": "first", "date": "2026-13-45"}, more=own)
    assert [(v["path"], v["rule"]) for v in caught.value.violations] == [
        ("cabin", "enum"),
        ("date", "format"),
    ]
    assert caught.value.violations[0]["message"] != "again"


def test_the_tools_own_checks_alone_refuse_the_call() -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_arguments(TOOL, {"date": "2026-13-45"}, more=own)
    assert [v["path"] for v in caught.value.violations] == ["date"]


def test_arguments_that_pass_both_are_returned() -> None:
    assert check_arguments(TOOL, {"date": "2026-01-02"}, more=lambda a: []) == {
        "date": "2026-01-02"
    }
