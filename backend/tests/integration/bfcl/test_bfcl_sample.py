"""The BFCL harness on the committed sample: oracle exactness and every corruption caught."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bench.bfcl.convert import SAMPLE_DIR, Item, load_category, load_sample
from bench.bfcl.harness import CHECKS, CORRUPTIONS, run_sample
from dynamic_tools.selection.function_schema import function_for_tool
from dynamic_tools.tools.models import ToolConfig

pytestmark = pytest.mark.bfcl

FLAGGED = "live_multiple_756-169-11"
TYPED = {"string", "integer", "number", "boolean", "array", "object"}


@pytest.fixture(scope="module")
def figures() -> dict[str, dict[str, Any]]:
    return run_sample()


@pytest.fixture(scope="module")
def sample() -> dict[str, list[Item]]:
    return load_sample()


def test_oracle_requests_match_the_gold_requests_exactly(
    figures: dict[str, dict[str, Any]],
) -> None:
    multiple, live = figures["multiple"], figures["live_multiple"]
    assert (multiple["items"], multiple["unflagged"], multiple["exact"]) == (25, 25, 25)
    assert (live["items"], live["unflagged"], live["exact"]) == (25, 24, 24)
    assert multiple["mismatches"] == {} and live["mismatches"] == {}
    assert multiple["rate"] == live["rate"] == 1.0


def test_the_flagged_item_is_refused_by_the_pipeline(figures: dict[str, dict[str, Any]]) -> None:
    assert figures["multiple"]["flagged"] == {}
    (item_id, info), *rest = figures["live_multiple"]["flagged"].items()
    assert (item_id, rest) == (FLAGGED, [])
    # Its gold genre 'horror' is not in the doc's enum: validation rejects it, nothing is sent.
    assert (info["stage"], info["sent"]) == ("llm_selection", 0)


@pytest.mark.parametrize("category", ["multiple", "live_multiple"])
def test_every_corruption_is_caught_at_llm_selection_with_no_request_sent(
    figures: dict[str, dict[str, Any]], sample: dict[str, list[Item]], category: str
) -> None:
    results = figures[category]["corruptions"]
    items = [i for i in sample[category] if not i.flagged]
    # "wrong types" needs a typed parameter in the gold tool; every other check runs per item.
    typed = sum(
        any(p.get("type") in TYPED for p in i.tool(i.gold_tool or "")["parameters"].values())
        for i in items
    )
    assert list(results) == list(CHECKS)
    assert len(CORRUPTIONS) == 12
    for name, result in results.items():
        expected = typed if name == "wrong types" else len(items)
        assert result["failures"] == {}, name
        assert (result["caught"], result["total"]) == (expected, expected), name
    assert results["path ../"]["total"] == len(items) == (25 if category == "multiple" else 24)


def test_runs_are_counted(figures: dict[str, dict[str, Any]]) -> None:
    # Per unflagged item: 1 oracle run, 12 corruptions (one may be n/a) and 2 controls.
    assert figures["multiple"]["pipeline_runs"] == 25 * 15
    assert 24 * 14 + 1 <= figures["live_multiple"]["pipeline_runs"] <= 24 * 15 + 1


def open_object_item() -> Item:
    (item,) = load_category(
        SAMPLE_DIR / "open_nested_object.jsonl",
        SAMPLE_DIR / "open_nested_object_answers.jsonl",
        "live_multiple",
    )
    return item


def test_the_tool_schema_accepts_extra_keys_in_a_nested_object() -> None:
    item = open_object_item()
    tool = ToolConfig.model_validate(item.tool(item.gold_tool or ""))
    assert list(Draft202012Validator(tool.input_schema()).iter_errors(item.arguments)) == []


def test_the_schema_offered_to_the_model_accepts_what_the_tool_schema_accepts() -> None:
    # An open nested object cannot be expressed in strict mode: the tool falls back to a
    # plain (non-strict) function whose schema is the tool's own.
    item = open_object_item()
    spec = function_for_tool(ToolConfig.model_validate(item.tool(item.gold_tool or "")))
    assert not spec.strict
    answer = item.arguments
    assert list(Draft202012Validator(spec.parameters).iter_errors(answer)) == []
