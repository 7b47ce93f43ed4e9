"""Exporting workflows as Arazzo: valid against the schema, what has no equivalent listed, and
importing the export gives back a workflow that makes the same calls with the same arguments."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

from dynamic_tools.definitions.arazzo.convert import convert_arazzo
from dynamic_tools.definitions.arazzo.export import export_arazzo
from dynamic_tools.definitions.arazzo.validation import check_arazzo
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES
from tests.support.plans import DocumentRunner

TRAVEL = EXAMPLES


@pytest.fixture(scope="module")
def travel() -> tuple[WorkflowDocument, ToolRegistry]:
    text = (TRAVEL / "workflows" / "travel.yaml").read_text(encoding="utf-8")
    registry = ToolRegistry(
        TRAVEL / "tools", variables={"PUBLIC_BASE_URL": "https://travel.example.com"}
    )
    registry.reload()
    return load_document(text, name="travel.yaml").document, registry


def _export(travel: tuple[WorkflowDocument, ToolRegistry], workflow_id: str) -> Any:
    document, registry = travel
    return export_arazzo(workflow_id, document.workflows, registry.find)


@pytest.mark.parametrize("workflow_id", ["book_flight", "book_hotel", "book_trip"])
def test_an_export_is_valid_arazzo_with_an_openapi_description_of_its_tools(
    travel: tuple[WorkflowDocument, ToolRegistry], workflow_id: str
) -> None:
    export = _export(travel, workflow_id)
    text = yaml.safe_dump(export.arazzo, sort_keys=False)
    check = check_arazzo(text, name="x.arazzo.yaml", sources={"tools": export.openapi})
    assert check.valid, check.violations
    assert export.openapi["openapi"] == "3.1.0" and export.openapi["paths"]


def test_what_has_no_arazzo_equivalent_is_listed_never_dropped(
    travel: tuple[WorkflowDocument, ToolRegistry],
) -> None:
    trip = {w["message"] for w in _export(travel, "book_trip").warnings}
    assert any("a parallel node has no Arazzo equivalent" in m for m in trip)
    assert any("a compensate node has no Arazzo equivalent" in m for m in trip)
    flight = {w["message"] for w in _export(travel, "book_flight").warnings}
    assert any(m.startswith("compensate_with (cancel_booking)") for m in flight)
    assert any("error node" in m for m in flight)
    approval = {w["message"] for w in _export(travel, "book_with_approval").warnings}
    assert any("a yield node has no Arazzo equivalent" in m for m in approval)
    cheapest = {w["message"] for w in _export(travel, "find_cheapest_across_dates").warnings}
    assert any("a foreach node has no Arazzo equivalent" in m for m in cheapest)


def _run(document: WorkflowDocument, workflow_id: str, answers: dict[str, Any], prefix: str) -> Any:
    tools = MockTools({prefix + name: value for name, value in answers.items()})
    runner = DocumentRunner(
        document, run_id="r1", tools=tools, steps=LocalSteps(), events=EventList()
    )
    params = {
        "origin": "AMS",
        "destination": "BCN",
        "date": "2026-12-01",
        "passenger": "Ada",
        "city": "LIS",
        "checkin": "2026-12-01",
        "checkout": "2026-12-03",
        "guest": "Ada",
    }
    wanted = document.workflows[workflow_id].params
    outcome = asyncio.run(runner.run(workflow_id, {k: v for k, v in params.items() if k in wanted}))
    return outcome, [(name.removeprefix(prefix), args) for name, args, _ in tools.calls]


@pytest.mark.parametrize("seats", [4, 0])
@pytest.mark.parametrize("workflow_id", ["book_flight", "book_hotel"])
def test_importing_an_export_gives_back_an_equivalent_workflow(
    travel: tuple[WorkflowDocument, ToolRegistry], workflow_id: str, seats: int
) -> None:
    document, _ = travel
    export = _export(travel, workflow_id)
    imported = convert_arazzo(export.arazzo, {"tools": export.openapi}, catalog="rt")
    assert not imported.errors, imported.errors
    again = load_document(yaml.safe_dump(imported.document), name="rt.yaml")
    assert validate_document(again, known_tools={t.name for t in imported.tools}).ok
    answers = {
        "search_flights": [{"id": "FL1", "price": 99}],
        "check_availability": {"flight_id": "FL1", "seats_available": seats},
        "create_booking": {"id": "BK1"},
        "add_to_waitlist": {"id": "WL1"},
        "search_hotels": [{"id": "H1"}],
        "book_hotel": {"id": "HB1"},
    }
    first, calls = _run(document, workflow_id, answers, "")
    second, calls_again = _run(again.document, workflow_id, answers, "rt_")
    assert first.status == second.status == "succeeded"
    assert calls_again == calls
