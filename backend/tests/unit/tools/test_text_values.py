"""Values that travel as text are read as their parameter's type (tools/text_values.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.tools.models import FORM, ToolConfig
from dynamic_tools.tools.text_values import read_text_values

TOOL = ToolConfig.model_validate(
    {
        "name": "search",
        "description": "Search.",
        "api": {"method": "POST", "base_url": "https://api.example.com", "path": "/s/{page}"},
        "parameters": {
            "page": {"in": "path", "required": True, "type": "integer"},
            "verbose": {"in": "query", "type": "boolean"},
            "ratio": {"in": "header", "type": "number"},
            "either": {"in": "query", "type": ["integer", "string"]},
            "flag": {"in": "body", "type": "boolean"},
        },
    }
)


@pytest.mark.parametrize(
    ("name", "text", "read"),
    [
        ("page", "12", 12),
        ("page", "-3", -3),
        ("page", "007", "007"),  # not how an integer is written: left for validation
        ("page", "1.5", "1.5"),
        ("verbose", "true", True),
        ("verbose", "false", False),
        ("verbose", "True", "True"),
        ("ratio", "2.5", 2.5),
        ("ratio", "1e3", 1000.0),
        ("ratio", "4", 4),
        ("either", "12", "12"),  # a string is allowed: taken as written
        ("flag", "true", "true"),  # a body value is JSON: never read
    ],
)
def test_text_is_read_only_where_it_spells_a_value_of_the_type(
    name: str, text: str, read: Any
) -> None:
    assert read_text_values(TOOL, {name: text})[name] == read


def test_typed_values_and_unknown_names_pass_unchanged() -> None:
    given = {"page": 2, "verbose": True, "other": "x"}
    assert read_text_values(TOOL, given) == given


def test_a_form_field_travels_as_text_too() -> None:
    form = TOOL.model_copy(update={"api": TOOL.api.model_copy(update={"content_type": FORM})})
    assert read_text_values(form, {"flag": "true"})["flag"] is True
