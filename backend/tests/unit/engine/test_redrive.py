"""Which nodes a redrive reuses: what succeeded and was not undone, in dependency order; never
a node only an activation runs; and a clear refusal for a node whose steps registered
compensations."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.redrive import Redrive, RedriveRefused, plan_redrive
from dynamic_tools.engine.state import NodeState
from tests.conftest import EXAMPLES
from tests.support.plans import plan_of

TRAVEL = load_document((EXAMPLES / "workflows" / "travel.yaml").read_text(), name="t.yaml")


def ok(output: Any = None, **detail: Any) -> NodeState:
    return NodeState(status="succeeded", output=output, input={"x": 1}, detail=detail)


def test_what_succeeded_before_the_failure_is_reused_and_the_rest_runs_again() -> None:
    plan = plan_of(TRAVEL.document, "book_flight")
    nodes = {
        "search": ok([{"id": "FL1"}]),
        "check": ok({"seats_available": 3}),
        "decide": ok({"goto": "reserve"}),
        "reserve": NodeState(status="failed"),
        "waitlist": NodeState(status="skipped"),
        "fail_booking": NodeState(status="failed"),
    }
    redrive = plan_redrive(plan, "old", nodes)
    assert list(redrive.outputs) == ["search", "check", "decide"]
    assert redrive.outputs["decide"] == {"goto": "reserve"}
    assert redrive.inputs["search"] == {"x": 1}
    assert redrive.runs_again["reserve"].startswith("it was failed")
    assert redrive.runs_again["waitlist"] == "it was skipped in the earlier run"
    assert (
        "only when activated"
        in plan_redrive(plan, "old", {**nodes, "waitlist": ok()}).runs_again["waitlist"]
    )
    journaled = to_json(redrive)
    assert journaled == {"from_run": "old", "outputs": redrive.outputs, "inputs": redrive.inputs}
    assert from_json(Redrive, journaled) == Redrive(
        from_run="old", outputs=redrive.outputs, inputs=redrive.inputs
    )
    assert from_json(Redrive | None, None) is None


def test_an_undone_call_runs_again_and_so_does_what_depends_on_it() -> None:
    plan = plan_of(TRAVEL.document, "book_with_approval")
    undone = ok({"id": "BK1"}, compensations=[{"name": "saga:book", "ok": True}])
    nodes = {
        "search": ok([{"id": "FL1"}]),
        "present_options": ok({"selected_flight_id": "FL1"}),
        "book": undone,
        "pay": ok({"id": "PAY1"}),  # e.g. a later step succeeded before a timeout
    }
    redrive = plan_redrive(plan, "old", nodes)
    assert list(redrive.outputs) == ["search", "present_options"]
    assert "compensation undid it" in redrive.runs_again["book"]
    assert redrive.runs_again["pay"] == "it depends on book, which runs again"


def test_a_fan_out_whose_steps_registered_compensations_is_refused() -> None:
    document = load_document(
        """
domain: d
workflows:
  w:
    graph:
      both:
        type: parallel
        branches:
          a: { call: create_booking, args: {}, compensate_with: { call: cancel_booking, args: {} } }
          b: { call: search_flights, args: {} }
      after: { call: search_flights, depends_on: [both] }
""",
        name="d.yaml",
    ).document
    plan = plan_of(document, "w")
    with pytest.raises(RedriveRefused) as refused:
        plan_redrive(
            plan, "old", {"both": ok({"a": 1, "b": 2}), "after": NodeState(status="failed")}
        )
    assert refused.value.node_id == "both"
    assert refused.value.context["reason"] == "redrive_refused"
    assert "registered compensations" in refused.value.message
