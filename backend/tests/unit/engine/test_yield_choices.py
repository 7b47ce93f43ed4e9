"""Choices in yields: options from an earlier output, the same in YAML and XML, checked at save
and on resume, and a clear failure when the list is not one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.nodes.pause import MAX_CHOICES
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import WorkflowInvalidError
from tests.support.plans import DocumentRunner

YAML = """
domain: demo
workflows:
  pick:
    graph:
      search:
        call: search_flights
        output: options
      choose:
        type: yield
        depends_on: [search]
        message: Which one?
        expects:
          flight:
            type: str
            required: true
            choices: {from: $options, value: $item.id, label: "$item.id for $item.price EUR"}
          seats: {type: int, required: true}
"""
XML = """<workflows domain="demo"><workflow id="pick"><graph>
  <step id="search"><call tool="search_flights"/><output name="options"/></step>
  <yield id="choose" message="Which one?" depends_on="search"><expects>
    <field name="flight" type="str">
      <choices from="$options" value="$item.id" label="$item.id for $item.price EUR"/>
    </field>
    <field name="seats" type="int"/>
  </expects></yield>
</graph></workflow></workflows>"""
FLIGHTS = [{"id": "FL-1", "price": 99}, {"id": "FL-2", "price": 120}]


def test_xml_and_yaml_choices_load_to_the_same_node() -> None:
    yaml_node = load_document(YAML, name="d.yaml").document.workflows["pick"].graph["choose"]
    xml_node = load_document(XML, name="d.xml").document.workflows["pick"].graph["choose"]
    assert xml_node.expects == yaml_node.expects
    choices = yaml_node.expects["flight"].choices
    assert choices is not None and choices.from_ == "$options"


@pytest.mark.parametrize(
    ("choices", "rule", "path_end"),
    [
        ("{from: $nothing, value: $item.id}", "unknown_reference", "choices.from"),
        ("{from: $options, value: $other.id}", "unknown_reference", "choices.value"),
        ('{from: $options, label: "$item.id $ghost"}', "unknown_reference", "choices.label"),
    ],
)
def test_choices_references_are_validated_at_save(choices: str, rule: str, path_end: str) -> None:
    text = YAML.replace(
        '{from: $options, value: $item.id, label: "$item.id for $item.price EUR"}', choices
    )
    report = validate_document(load_document(text, name="d.yaml"), known_tools=None)
    found = [(v.rule, v.path) for v in report.errors]
    assert (rule, f"workflows.pick.graph.choose.expects.flight.{path_end}") in found, found


def test_choices_from_must_be_one_reference() -> None:
    text = YAML.replace("from: $options,", "from: options,")
    with pytest.raises(WorkflowInvalidError) as caught:
        load_document(text, name="d.yaml")
    paths = [v["path"] for v in caught.value.violations]
    assert any(p.endswith("choose.expects.flight.choices.from") for p in paths), paths
    assert "must be one reference to a list" in str(caught.value.violations)


async def _run(flights: Any, answer: dict[str, Any] | None = None) -> tuple[Any, EventList]:
    document = load_document(YAML, name="d.yaml").document
    steps, events = LocalSteps(), EventList()
    runner = DocumentRunner(
        document,
        run_id="run-1",
        tools=MockTools({"search_flights": flights}),
        steps=steps,
        events=events,
    )
    task = asyncio.create_task(runner.run("pick", {}))
    for _ in range(500):  # bounded: 5 s at most
        if task.done() or events.of("waiting_input"):
            break
        await asyncio.sleep(0.01)
    if answer is not None and not task.done():
        steps.answer("yield:choose", answer)
    elif not task.done():
        task.cancel()
        return None, events
    return await asyncio.wait_for(task, 5), events


async def test_the_list_becomes_options_and_an_answer_outside_them_fails() -> None:
    outcome, events = await _run(FLIGHTS, {"flight": "FL-3", "seats": 1})
    offered = events.of("waiting_input")[0]["expects"]
    assert offered["flight"]["enum"] == ["FL-1", "FL-2"]
    assert offered["flight"]["options"] == [
        {"value": "FL-1", "label": "FL-1 for 99 EUR", "item": FLIGHTS[0]},
        {"value": "FL-2", "label": "FL-2 for 120 EUR", "item": FLIGHTS[1]},
    ]
    assert offered["seats"] == {"type": "int", "required": True}
    assert outcome.status == "failed"
    assert "values.flight" in outcome.error["message"]


async def test_an_offered_answer_is_taken() -> None:
    outcome, _ = await _run(FLIGHTS, {"flight": "FL-2", "seats": 2})
    assert outcome.status == "succeeded"
    assert outcome.nodes["choose"].output == {"flight": "FL-2", "seats": 2}


@pytest.mark.parametrize(
    ("flights", "message"),
    [
        ({"id": "FL-1"}, "$options is dict, not a list"),
        ([{"id": str(i)} for i in range(MAX_CHOICES + 1)], f"more than {MAX_CHOICES} options"),
        ([{"id": {"nested": 1}, "price": 1}], "the value of item 0 is dict"),
    ],
    ids=["not_a_list", "too_many", "value_not_scalar"],
)
async def test_options_that_cannot_be_offered_fail_the_node_clearly(
    flights: Any, message: str
) -> None:
    outcome, _ = await _run(flights)
    assert outcome.status == "failed"
    assert outcome.error["node_id"] == "choose"
    assert "'choose' expects.flight.choices" in outcome.error["message"]
    assert message in outcome.error["message"]
