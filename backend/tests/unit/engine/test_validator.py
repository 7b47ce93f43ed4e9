from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES, FIXTURES

SEEDS = FIXTURES / "workflows" / "seeds"


@pytest.fixture(scope="module")
def travel_tools() -> dict[str, dict[str, Any]]:
    """The travel example's tools with their input schemas (call args are checked)."""
    registry = ToolRegistry(EXAMPLES / "tools", variables={"PUBLIC_BASE_URL": "http://x"})
    registry.reload()
    return registry.input_schemas()


def report_for(path: Path, tools: Mapping[str, Any] | None):  # type: ignore[no-untyped-def]
    return validate_document(load_document(path.read_text(), name=path.name), known_tools=tools)


@pytest.mark.parametrize("path", sorted((EXAMPLES / "workflows").iterdir()), ids=lambda p: p.name)
def test_the_shipped_examples_validate_cleanly(
    path: Path, travel_tools: dict[str, dict[str, Any]]
) -> None:
    report = report_for(path, travel_tools)
    assert report.violations == []


def test_every_rule_is_reported_with_path_and_line(travel_tools: dict[str, dict[str, Any]]) -> None:
    report = report_for(FIXTURES / "workflows" / "invalid" / "many_violations.yaml", travel_tools)
    found = {(v.rule, v.path, v.line) for v in report.violations}
    base = "workflows.broken.graph"
    expected = {
        ("unknown_tool", f"{base}.search.call", 11),
        ("unknown_reference", f"{base}.search.args.when", 12),
        ("name_clash", f"{base}.search.output", 13),
        ("unknown_dependency", f"{base}.check.depends_on", 16),
        ("invalid_expression", f"{base}.decide.on.0.when", 22),
        ("unknown_target", f"{base}.decide.on.0.goto", 23),
        ("unbounded_foreach", f"{base}.loop", 26),
        ("name_clash", f"{base}.loop.as", 29),
        ("cycle", f"{base}.a", 31),
        ("cycle", f"{base}.check", 14),
        ("unknown_workflow", f"{base}.sub.workflow", 40),
        ("unknown_yield_field", f"{base}.use_answer.args.flight_id", 48),
        ("unknown_table", f"{base}.report.args.sql", 51),
        ("error_node_always_runs", f"{base}.fail_now", 52),
        ("never_activated", f"{base}.orphan_undo", 55),
        ("invalid_partial_failure_target", f"{base}.par.on_partial_failure", 62),
        ("workflow_cycle", "workflows.loops_a", 63),
    }
    assert expected <= found, expected - found
    assert not report.ok and len(report.warnings) == 1
    unknown_tool = next(v for v in report.violations if v.rule == "unknown_tool")
    assert unknown_tool.expected == ["search_hotels"]  # the close match is suggested
    expression = next(v for v in report.violations if v.rule == "invalid_expression")
    assert "position 9" in expression.message


def test_seed_examples_are_valid_or_reported_precisely(
    travel_tools: dict[str, dict[str, Any]],
) -> None:
    assert report_for(SEEDS / "seed000_book_flight.yaml", travel_tools).violations == []
    assert report_for(SEEDS / "seed000_book_flight.xml", travel_tools).violations == []
    full = report_for(SEEDS / "seed001_full.yaml", travel_tools)
    assert {(v.rule, v.path) for v in full.violations} == {
        ("unknown_tool", "workflows.check_flight_status.graph.lookup.call"),
        (
            "unknown_workflow",
            "workflows.book_trip.graph.flight_and_hotel.branches.book_hotel_branch.workflow",
        ),
        # book_with_approval books without a passenger: create_booking requires one
        ("missing_argument", "workflows.book_with_approval.graph.book.args"),
        ("required_default", "workflows.find_cheapest_across_dates.params.num_days.default"),
    }
    shop = report_for(SEEDS / "seed000_ecommerce.yaml", None)
    assert {(v.rule, v.severity) for v in shop.violations} == {
        ("unknown_table", "error"),
        ("maybe_skipped_reference", "warning"),
        ("builtin_args", "error"),  # rest_call with no base URL anywhere: it could not run
    }
    trip = report_for(SEEDS / "seed000_book_trip.yaml", travel_tools)
    assert {v.rule for v in trip.violations} == {"unknown_workflow", "unknown_tool"}


def test_without_known_tools_the_tool_check_is_skipped() -> None:
    report = report_for(SEEDS / "seed001_full.yaml", None)
    assert [v.rule for v in report.violations] == ["unknown_workflow", "required_default"]


def test_sub_workflows_from_other_documents_count_as_known(
    travel_tools: dict[str, dict[str, Any]],
) -> None:
    doc = load_document((SEEDS / "seed000_book_trip.yaml").read_text(), name="trip.yaml")
    report = validate_document(
        doc, known_tools={**travel_tools, "hotels_query": None}, known_workflows={"book_flight"}
    )
    assert report.violations == []


def test_error_is_known_only_in_a_fallback_target(travel_tools: dict[str, dict[str, Any]]) -> None:
    report = report_for(FIXTURES / "workflows" / "engine" / "error_reference.yaml", travel_tools)
    unknown = [v for v in report.violations if v.rule == "unknown_reference"]
    assert [v.path for v in unknown] == ["workflows.uses_error.graph.after.args.origin"]
    assert "on_error.fallback" in unknown[0].message
