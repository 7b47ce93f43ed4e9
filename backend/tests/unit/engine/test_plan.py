"""Run plans: built once, only from a clean report; sub-workflows and references resolved."""

from __future__ import annotations

import pytest
import yaml

from dynamic_tools.engine.loaders import LoadedDocument, load_document
from dynamic_tools.engine.plan import (
    PlanRefused,
    blocking_errors,
    compile_plan,
    reachable_workflows,
    workflow_of_path,
)
from dynamic_tools.errors import InvalidInputError, NotFoundError
from dynamic_tools.violations import Violation

DOC = """
domain: travel
workflows:
  trip:
    params: {origin: {type: string, required: true}, seats: {type: integer, default: 1}}
    graph:
      flights: {call: search_flights, args: {from: $origin}, output: flights}
      book: {workflow: book_one, args: {flight: "$flights.0.id"}, depends_on: [flights]}
      each:
        type: foreach
        items: $flights
        max_iterations: 10
        step: {workflow: hold_one, args: {flight: $item.id}}
  book_one:
    params: {flight: {type: string, required: true}}
    graph:
      book: {call: create_booking, args: {flight_id: $flight}}
  hold_one:
    params: {flight: {type: string, required: true}}
    graph:
      hold: {call: hold_seat, args: {flight_id: $flight}}
  unrelated:
    graph:
      ping: {call: ping}
"""
TOOLS = {"search_flights", "create_booking", "hold_seat", "ping"}


def document() -> LoadedDocument:
    return load_document(DOC, name="trip.yaml")


def test_the_plan_holds_the_reachable_workflows_compiled_once() -> None:
    plan = compile_plan(document(), "trip", TOOLS)
    assert set(plan.workflows) == {"trip", "book_one", "hold_one"}
    root = plan.root
    assert root.order == ("flights", "book", "each")
    assert root.sub_workflows == {"book_one", "hold_one"}
    assert plan.of("book_one").graph is plan.of("book_one").graph  # not rebuilt
    assert root.references["flights"] == {"origin"}
    assert root.references["book"] == {"flights"}


def test_params_are_checked_once_by_the_plan() -> None:
    plan = compile_plan(document(), "trip", TOOLS)
    assert plan.check_params({"origin": "AMS"}) == {"origin": "AMS", "seats": 1}
    with pytest.raises(InvalidInputError) as refused:
        plan.check_params({"seats": "x"})
    assert {v["path"] for v in refused.value.violations} == {"params.origin", "params.seats"}


def test_no_plan_from_a_document_with_errors() -> None:
    with pytest.raises(PlanRefused) as refused:
        compile_plan(document(), "trip", {"search_flights"})
    assert all(v["rule"] for v in refused.value.violations)
    assert "cannot run" in refused.value.message


def test_an_unknown_workflow_is_not_found() -> None:
    with pytest.raises(NotFoundError):
        compile_plan(document(), "nope", TOOLS)


def test_known_tools_none_skips_only_the_tool_check() -> None:
    plan = compile_plan(document(), "unrelated")
    assert set(plan.workflows) == {"unrelated"}
    broken = yaml.safe_load(DOC)
    broken["workflows"]["unrelated"]["graph"]["ping"]["depends_on"] = ["missing"]
    with pytest.raises(PlanRefused):
        compile_plan(load_document(yaml.safe_dump(broken), name="b.yaml"), "unrelated")


def test_a_sibling_workflows_errors_do_not_stop_a_run() -> None:
    """Only the workflow, the sub-workflows it reaches and the document itself count."""
    broken = yaml.safe_load(DOC)
    broken["workflows"]["unrelated"]["graph"]["ping"]["depends_on"] = ["missing"]
    broken["workflows"]["hold_one"]["graph"]["hold"] = {"workflow": "not_defined"}
    loaded = load_document(yaml.safe_dump(broken), name="b.yaml")
    plan = compile_plan(loaded, "book_one", TOOLS)  # neither broken one is reached
    assert set(plan.workflows) == {"book_one"}
    with pytest.raises(PlanRefused) as refused:
        compile_plan(loaded, "trip", TOOLS)  # reaches hold_one
    paths = {v["path"].split(".")[1] for v in refused.value.violations}
    assert paths == {"hold_one"}


def test_reachable_workflows_and_blocking_errors() -> None:
    model = document().document
    assert reachable_workflows(model, "trip") == ["trip", "book_one", "hold_one"]
    assert reachable_workflows(model, "unrelated") == ["unrelated"]
    assert workflow_of_path("workflows.trip.graph.book") == "trip"
    assert workflow_of_path("domain") is None
    errors = [
        Violation(path="workflows.unrelated.graph.ping", rule="r", message="m"),
        Violation(path="workflows.hold_one.graph.hold", rule="r", message="m"),
        Violation(path="base_url", rule="r", message="m"),
    ]
    blocking = blocking_errors(errors, model, "trip")
    assert [v.path for v in blocking] == ["workflows.hold_one.graph.hold", "base_url"]
    assert [v.path for v in blocking_errors(errors, model, "book_one")] == ["base_url"]
