"""Graph facts: activations, outputs, skip analysis, cycles."""

from __future__ import annotations

import yaml

from dynamic_tools.engine.graph import WorkflowGraph
from dynamic_tools.engine.models import Workflow

FLOW = """
graph:
  search: {call: search_flights, output: flights}
  choose:
    type: branch
    depends_on: [search]
    "on":
      - {when: "$flights.length > 0", goto: book}
      - {goto: give_up}
  book:
    call: create_booking
    output: booking
    on_error: {retry: 1, fallback: waitlist}
  waitlist: {call: add_to_waitlist, output: waiting}
  give_up: {type: error, message: no flights}
  both:
    type: parallel
    depends_on: [book]
    on_partial_failure: undo
    branches:
      pay: {call: process_payment, output: payment}
      mail: {call: send_mail, on_error: {fallback: waitlist}}
  undo:
    type: compensate
    steps: [{call: cancel_booking}]
  after: {call: notify, depends_on: [both]}
"""


def graph(text: str = FLOW) -> WorkflowGraph:
    return WorkflowGraph(Workflow.model_validate(yaml.safe_load(text)))


def test_activation_targets_name_where_each_target_is_written() -> None:
    g = graph()
    assert g.activation_targets("choose") == [
        (("on", 0, "goto"), "book"),
        (("on", 1, "goto"), "give_up"),
    ]
    assert g.activation_targets("book") == [(("on_error", "fallback"), "waitlist")]
    assert (("on_partial_failure",), "undo") in g.activation_targets("both")
    assert (("branches", "mail", "on_error", "fallback"), "waitlist") in g.activation_targets(
        "both"
    )


def test_activated_nodes_run_only_when_something_activates_them() -> None:
    assert graph().activated == frozenset({"book", "give_up", "waitlist", "undo"})


def test_outputs_and_their_producers() -> None:
    g = graph()
    assert g.output_names() == {"flights", "booking", "waiting", "payment"}
    assert g.producers("payment") == ["both"]


def test_skip_analysis() -> None:
    g = graph()
    assert g.may_be_skipped("book")  # activated
    assert g.may_be_skipped("after")  # waits only on nodes that may be skipped
    assert not g.may_be_skipped("search")
    assert g.guarded_by("after", "both") and not g.guarded_by("search", "both")


def test_cycles_are_found_once_each() -> None:
    cyclic = graph(
        "graph:\n  a: {call: x, depends_on: [c]}\n  b: {call: x, depends_on: [a]}\n"
        "  c: {call: x, depends_on: [b]}\n  d: {call: x}\n"
    )
    (cycle,) = cyclic.cycles()
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert graph().cycles() == []
