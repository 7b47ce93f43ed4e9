"""The shipped markdown examples parse cleanly, name only tools the travel example registers,
and need no variable that is neither a stated input nor set by an earlier step."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dynamic_tools.markdown.parser import parse_markdown
from tests.conftest import EXAMPLES

MARKDOWN = sorted((EXAMPLES / "markdown").glob("*.md"))
TRAVEL_TOOLS = {
    yaml.safe_load(path.read_text())["name"] for path in (EXAMPLES / "tools").glob("*.yaml")
}


def test_there_are_examples_and_the_travel_tools() -> None:
    assert {p.name for p in MARKDOWN} >= {"book_flight.md", "book_trip.md", "waitlist_or_book.md"}
    assert len(TRAVEL_TOOLS) == 10


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_each_example_parses_and_uses_travel_tools(path: Path) -> None:
    workflow = parse_markdown(path.read_text(encoding="utf-8"), source=path.name)
    assert workflow.title and workflow.description
    assert set(workflow.tool_names) <= TRAVEL_TOOLS, set(workflow.tool_names) - TRAVEL_TOOLS
    for step in workflow.steps:
        assert step.assertions, f"{path.name}: step '{step.name}' has no assertion"
    # Every workflow input is announced in the preamble, so a model knows what to ask for.
    for use in workflow.required_inputs:
        assert use.name in workflow.description, f"{path.name}: {use.name} not announced"


def test_the_flight_example_chains_search_check_and_booking() -> None:
    workflow = parse_markdown((EXAMPLES / "markdown" / "book_flight.md").read_text())
    assert [s.tool_names for s in workflow.steps] == [
        ["search_flights"],
        ["check_availability"],
        ["create_booking"],
    ]
    assert [u.name for u in workflow.required_inputs] == [
        "ORIGIN",
        "DESTINATION",
        "DATE",
        "PASSENGER",
    ]
    assert workflow.steps[0].output_variables == ["FLIGHT_ID", "PRICE"]
    assert [u.name for u in workflow.steps[1].reads] == ["FLIGHT_ID"]


def test_the_reference_documents_complete_example_is_the_shipped_file() -> None:
    doc = (EXAMPLES.parents[1] / "docs" / "markdown-workflows.md").read_text(encoding="utf-8")
    section = doc.split("## A complete example", 1)[1]
    block = section.split("````markdown\n", 1)[1].split("\n````", 1)[0]
    assert block + "\n" == (EXAMPLES / "markdown" / "book_flight.md").read_text(encoding="utf-8")
    assert "(docs/markdown-workflows.md)" in (EXAMPLES.parents[1] / "README.md").read_text()
