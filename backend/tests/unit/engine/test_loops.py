"""Loops: a branch's goto back to an earlier node runs the nodes from there again, at most
``max_loops`` times, each round's steps named apart so a replay takes the same path."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools, Responses
from dynamic_tools.engine.validator import validate_document
from tests.support.plans import DocumentRunner

POLL = """
domain: demo
workflows:
  wait:
    params: {order: {type: str, required: true}}
    graph:
      place: {call: place_order, args: {id: $order}, output: placed}
      poll:
        call: order_status
        args: {id: $placed.id}
        output: status
        depends_on: [place]
      again:
        type: branch
        depends_on: [poll]
        on:
          - when: $status.state != 'done'
            goto: poll
            max_loops: 3
        default: ship
      ship: {call: ship, args: {id: $placed.id}}
"""


def _run(text: str, mocks: dict[str, Any]) -> tuple[Any, DocumentRunner, MockTools, LocalSteps]:
    document = load_document(text, name="d.yaml").document
    tools, steps = MockTools(mocks), LocalSteps()
    runner = DocumentRunner(document, run_id="r1", tools=tools, steps=steps, events=EventList())
    outcome = asyncio.run(runner.run("wait", {"order": "A1"}))
    return outcome, runner, tools, steps


def test_a_goto_back_polls_until_done_with_each_rounds_steps_named_apart() -> None:
    states = Responses([{"state": "queued"}, {"state": "packing"}, {"state": "done"}])
    outcome, runner, tools, steps = _run(
        POLL, {"place_order": {"id": "O1"}, "order_status": states, "ship": {"ok": True}}
    )
    assert outcome.status == "succeeded", outcome.error
    assert [c[0] for c in tools.calls] == [
        "place_order",
        "order_status",
        "order_status",
        "order_status",
        "ship",
    ]
    assert [n for n in steps.names if n.startswith("call:poll")] == [
        "call:poll:1",
        "call:poll:1@2",
        "call:poll:1@3",
    ]
    keys = [c[2] for c in tools.calls if c[0] == "order_status"]
    assert len(set(keys)) == 3  # each round is a new operation for the API
    assert runner.nodes["poll"].output == {"state": "done"}
    assert validate_document(load_document(POLL, name="d.yaml")).ok


def test_a_loop_past_its_bound_fails_the_run_naming_it() -> None:
    outcome, _, tools, _ = _run(
        POLL, {"place_order": {"id": "O1"}, "order_status": {"state": "queued"}, "ship": {}}
    )
    assert outcome.status == "failed"
    assert "went back to 'poll' more than its max_loops (3) times" in outcome.error["message"]
    assert [c[0] for c in tools.calls].count("order_status") == 4
    assert "ship" not in [c[0] for c in tools.calls]


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (("            max_loops: 3\n", ""), "cycle"),
        (("            goto: poll\n", "            goto: ship\n"), "loop_target"),
    ],
)
def test_a_goto_back_needs_a_bound_and_a_bound_needs_a_goto_back(
    change: tuple[str, str], rule: str
) -> None:
    text = POLL.replace(*change)
    report = validate_document(load_document(text, name="d.yaml"))
    assert rule in {v.rule for v in report.errors}, report.errors
    if rule == "cycle":
        assert any("give it max_loops" in v.message for v in report.errors)


def test_a_loop_may_not_run_a_fan_out_again() -> None:
    text = POLL.replace(
        "      ship: {call: ship, args: {id: $placed.id}}\n",
        "      ship: {call: ship, args: {id: $placed.id}}\n"
        "      each:\n        type: foreach\n        items: $status.lines\n        as: line\n"
        "        depends_on: [poll]\n        step: {call: ship, args: {id: $line}}\n",
    )
    report = validate_document(load_document(text, name="d.yaml"))
    found = [v for v in report.errors if v.rule == "loop_body"]
    assert found and "'each' (foreach)" in found[0].message


def test_a_loop_reads_the_same_from_xml() -> None:
    xml = """<workflows domain="demo"><workflow id="wait">
  <params><param name="order" type="str" required="true"/></params>
  <graph>
    <step id="place"><call tool="place_order"/><args><arg name="id" value="$order"/></args>
      <output name="placed"/></step>
    <step id="poll" depends_on="place"><call tool="order_status"/>
      <args><arg name="id" value="$placed.id"/></args><output name="status"/></step>
    <branch id="again" depends_on="poll">
      <condition when="$status.state != 'done'" goto="poll" max_loops="3"/>
      <default goto="ship"/>
    </branch>
    <step id="ship"><call tool="ship"/><args><arg name="id" value="$placed.id"/></args></step>
  </graph></workflow></workflows>"""
    from_xml = load_document(xml, name="d.xml").document.workflows["wait"].graph
    from_yaml = load_document(POLL, name="d.yaml").document.workflows["wait"].graph
    assert from_xml["again"] == from_yaml["again"]
