"""A call's ``body``: one value whose properties are the tool's body arguments, under args."""

from __future__ import annotations

import asyncio
from typing import Any

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.validator import validate_document
from tests.support.plans import DocumentRunner

DOCUMENT = """
domain: demo
workflows:
  w:
    params:
      order: {type: any}
    graph:
      place:
        call: create
        body: $order
        args: {quantity: 2}
        output: placed
"""


def _run(params: dict[str, Any], text: str = DOCUMENT) -> Any:
    document = load_document(text, name="d.yaml").document
    tools = MockTools({"create": {"id": "O-1"}})
    runner = DocumentRunner(
        document, run_id="r1", tools=tools, steps=LocalSteps(), events=EventList()
    )
    return asyncio.run(runner.run("w", params)), tools


def test_the_body_s_properties_are_the_arguments_and_args_win() -> None:
    outcome, tools = _run({"order": {"item": "I1", "quantity": 9}})
    assert outcome.status == "succeeded", outcome.error
    assert [c[1] for c in tools.calls] == [{"item": "I1", "quantity": 2}]


def test_a_body_that_is_not_an_object_fails_the_call_naming_the_node() -> None:
    outcome, tools = _run({"order": "I1"})
    assert outcome.status == "failed"
    assert "the body of node 'place' is a string, not an object" in outcome.error["message"]
    assert tools.calls == []


def test_a_literal_body_is_checked_with_the_args_when_the_document_is_saved() -> None:
    text = DOCUMENT.replace("body: $order", "body: 7")
    schema = {
        "type": "object",
        "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
        "required": ["item"],
        "additionalProperties": False,
    }
    report = validate_document(load_document(text, name="d.yaml"), known_tools={"create": schema})
    assert {v.rule for v in report.errors} == {"body_type"}
    # a literal object body counts with the args: item is given, colour is not a property
    given = DOCUMENT.replace("body: $order", "body: {item: I1, colour: red}")
    report = validate_document(load_document(given, name="d.yaml"), known_tools={"create": schema})
    assert {(v.rule, v.path) for v in report.errors} == {
        ("unknown_argument", "workflows.w.graph.place.args.colour")
    }
