"""A session's workflow document: the valid workflows are served and runnable, the invalid ones
and their callers (only those) are left out with one problem each."""

from __future__ import annotations

import hashlib

import pytest

from dynamic_tools.engine.plan import compile_plan
from dynamic_tools.errors import WorkflowInvalidError
from dynamic_tools.mcp.session_sources import load_session_workflows
from dynamic_tools.tools.documents import FetchedDocument
from tests.conftest import FIXTURES

SEED001 = (FIXTURES / "workflows" / "seeds" / "seed001_full.yaml").read_text()
BOOKING = {
    "type": "object",
    "properties": {"flight_id": {"type": "string"}, "passenger": {"type": "string"}},
    "required": ["flight_id", "passenger"],
}
TRAVEL_TOOLS: dict[str, object] = {
    name: None
    for name in (
        "search_flights",
        "check_availability",
        "create_booking",
        "process_payment",
        "add_to_waitlist",
        "search_hotels",
        "book_hotel",
        "confirm_trip",
        "cancel_booking",
        "cancel_hotel",
        "flights_query",
        "flights_execute",
    )
} | {"create_booking": BOOKING}
CALLERS = """
  approve_then_report:
    params: { origin: { type: str, required: true } }
    graph:
      approve:
        workflow: book_with_approval
        args: { origin: $origin, destination: BCN, date: "2026-12-01" }
  outer:
    params: { origin: { type: str, required: true } }
    graph:
      inner:
        workflow: approve_then_report
        args: { origin: $origin }
  fine:
    params: { origin: { type: str, required: true } }
    graph:
      flight:
        workflow: book_flight
        args: { origin: $origin, destination: BCN, date: "2026-12-01", passenger: Ada }
"""


def fetched(text: str, name: str = "workflows.yaml") -> FetchedDocument:
    return FetchedDocument(text.encode(), name, "path", f"/registry/{name}")


def load(text: str) -> tuple[list[str], dict[str, list[dict[str, object]]], object]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    found = load_session_workflows(fetched(text), dict(TRAVEL_TOOLS), digest, False)
    return found.valid, {p["workflow"]: p["violations"] for p in found.problems}, found.document


def test_the_full_specification_serves_its_valid_workflows_runnable() -> None:
    valid, problems, document = load(SEED001)
    assert valid == ["check_flight_status", "book_flight", "find_cheapest_across_dates"]
    assert set(problems) == {"book_trip", "book_with_approval"}
    assert document is not None
    assert list(document.workflows) == valid  # type: ignore[attr-defined]
    for workflow_id in valid:  # a run compiles, though siblings were invalid
        assert compile_plan(document, workflow_id).workflow_id == workflow_id  # type: ignore[arg-type]


def test_callers_of_a_left_out_workflow_are_left_out_and_only_they() -> None:
    valid, problems, document = load(SEED001 + CALLERS)
    assert set(problems) == {"book_trip", "book_with_approval", "approve_then_report", "outer"}
    assert "fine" in valid and "book_flight" in valid
    [caller] = problems["approve_then_report"]
    assert caller["rule"] == "sub_workflow_left_out"
    assert "'book_with_approval'" in str(caller["message"])
    assert {v["rule"] for v in problems["outer"]} == {"sub_workflow_left_out"}
    assert compile_plan(document, "fine").workflows.keys() == {"fine", "book_flight"}  # type: ignore[arg-type]


def test_a_document_error_leaves_every_workflow_out() -> None:
    """Not one workflow's problem: the document is refused (the session reports it)."""
    text = SEED001.replace('version: "1.0"', 'version: "1.0"\nbase_url: 12')
    with pytest.raises(WorkflowInvalidError) as refused:
        load(text)
    assert refused.value.violations[0]["path"] == "base_url"
