"""The five tool definitions: the design's names (docs/seed-names.md), valid JSON Schemas,
honest annotations, and a
report_step_result schema that accepts what the prompt tells the model to send."""

from __future__ import annotations

import re

import jsonschema
import pytest

from dynamic_tools.markdown.parser import parse_markdown
from dynamic_tools.markdown.prompts import report_example
from dynamic_tools.markdown.tool_specs import TOOL_NAMES, TOOL_SPECS
from tests.conftest import EXAMPLES

SPECS = {spec["name"]: spec for spec in TOOL_SPECS}


def test_the_five_tools_of_seed_004() -> None:
    assert [spec["name"] for spec in TOOL_SPECS] == [
        "load_workflow",
        "execute_workflow_step",
        "report_step_result",
        "get_workflow_state",
        "reset_workflow",
    ]
    assert frozenset(SPECS) == TOOL_NAMES


@pytest.mark.parametrize("spec", TOOL_SPECS, ids=lambda s: s["name"])
def test_each_spec_is_complete_and_its_schemas_are_valid(spec: dict) -> None:
    assert set(spec) == {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    }
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", spec["name"])
    assert 80 <= len(spec["description"]) <= 700
    for key in ("inputSchema", "outputSchema"):
        jsonschema.Draft202012Validator.check_schema(spec[key])
        assert spec[key]["type"] == "object"
    assert spec["inputSchema"]["properties"]["session_id"]["type"] == "string"
    assert spec["inputSchema"]["additionalProperties"] is False
    assert set(spec["outputSchema"]["required"]) >= {"session_id", "next_action"}
    assert spec["annotations"]["openWorldHint"] is False


def test_only_get_workflow_state_is_read_only_and_reset_is_destructive() -> None:
    read_only = {n for n, s in SPECS.items() if s["annotations"].get("readOnlyHint")}
    assert read_only == {"get_workflow_state"}
    assert SPECS["reset_workflow"]["annotations"]["destructiveHint"] is True
    assert SPECS["report_step_result"]["annotations"]["idempotentHint"] is False
    assert SPECS["report_step_result"]["inputSchema"]["required"] == ["step_number", "status"]


def test_the_report_example_in_every_prompt_fits_the_input_schema() -> None:
    validator = jsonschema.Draft202012Validator(SPECS["report_step_result"]["inputSchema"])
    for path in sorted((EXAMPLES / "markdown").glob("*.md")):
        for step in parse_markdown(path.read_text()).steps:
            example = report_example(step, "session-1", {})
            assert list(validator.iter_errors(example)) == []
    bad = {"step_number": -1, "status": "done", "extra": 1}
    messages = sorted(e.message for e in validator.iter_errors(bad))
    assert len(messages) == 3
