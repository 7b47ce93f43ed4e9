"""Call arguments are checked against the called tool's input schema when a document is
validated: names, required, types, formats of literals and of typed parameters; sub-workflow
arguments against the sub-workflow's params; a rest_call needs a base URL."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES

DOCUMENT = """\
domain: checks
workflows:
  calls:
    params:
      when: {type: str, format: date}
      party: {type: int}
      name: {type: str}
    graph:
      book:
        call: create_booking
        args: {flight_id: FL-1, bogus: 1}
      search:
        call: search_flights
        args: {origin: AMS, destination: BCN, date: not-a-date, passengers: two}
        output: found
      typed:
        call: search_flights
        args: {origin: $party, destination: "to $name", date: $when}
      fine:
        call: search_flights
        args: {origin: $name, destination: $found.0.id, date: "2026-12-01", passengers: $party}
      sub:
        workflow: helper
        args: {count: "x", extra: 1}
      rest:
        call: rest_call
        args: {method: GET, path: /x}
  helper:
    params:
      count: {type: int, required: true}
      label: {type: str, required: true}
    graph:
      noop:
        call: search_hotels
        args: {city: Paris, checkin: "2026-12-01", checkout: "2026-12-03"}
"""


@pytest.fixture(scope="module")
def travel_tools() -> dict[str, dict[str, Any]]:
    registry = ToolRegistry(EXAMPLES / "tools", variables={"PUBLIC_BASE_URL": "http://x"})
    registry.reload()
    return registry.input_schemas()


def test_call_arguments_are_checked_against_the_tool_schema(
    travel_tools: dict[str, dict[str, Any]],
) -> None:
    report = validate_document(load_document(DOCUMENT, name="c.yaml"), known_tools=travel_tools)
    found = {(v.rule, v.path) for v in report.errors}
    base = "workflows.calls.graph"
    assert found == {
        ("missing_argument", f"{base}.book.args"),  # create_booking needs a passenger
        ("unknown_argument", f"{base}.book.args.bogus"),
        ("argument_value", f"{base}.search.args.date"),  # not a date
        ("argument_value", f"{base}.search.args.passengers"),  # "two" is not an integer
        ("argument_type", f"{base}.typed.args.origin"),  # $party is an int param
        ("argument_value", f"{base}.sub.args.count"),  # helper's count is an int
        ("unknown_argument", f"{base}.sub.args.extra"),
        ("missing_argument", f"{base}.sub.args"),  # helper's label
        ("builtin_args", f"{base}.rest.args"),  # no base URL anywhere
    }
    by_path = {v.path: v for v in report.errors}
    assert "create_booking needs argument 'passenger'" in by_path[f"{base}.book.args"].message
    assert by_path[f"{base}.book.args"].line == 11
    assert by_path[f"{base}.book.args.bogus"].expected == ["flight_id", "passenger"]


def test_names_only_skip_the_argument_checks() -> None:
    names = {"create_booking", "search_flights", "search_hotels"}
    report = validate_document(load_document(DOCUMENT, name="c.yaml"), known_tools=names)
    rules = {v.rule for v in report.errors}
    assert "unknown_argument" in rules  # the sub-workflow's params are known all the same
    assert not any(v.path.startswith("workflows.calls.graph.book") for v in report.errors)


def test_a_document_base_url_serves_rest_calls(travel_tools: dict[str, dict[str, Any]]) -> None:
    text = DOCUMENT.replace("domain: checks", "domain: checks\nbase_url: https://api.example")
    report = validate_document(load_document(text, name="c.yaml"), known_tools=travel_tools)
    assert "builtin_args" not in {v.rule for v in report.errors}
