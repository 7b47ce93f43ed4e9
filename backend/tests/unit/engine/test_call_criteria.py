"""A call's answer judged by criteria (simple, regex, jsonpath, xpath), read into named outputs
with its status and headers, retried while criteria fail, and a branch that ends the workflow."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools, Responses
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.engine.validator import validate_document
from tests.support.plans import DocumentRunner


def _run(yaml_text: str, mocks: dict[str, Any], params: dict[str, Any] | None = None) -> Any:
    document = load_document(yaml_text, name="d.yaml").document
    tools = MockTools(mocks)
    runner = DocumentRunner(
        document, run_id="r1", tools=tools, steps=LocalSteps(), events=EventList()
    )
    outcome = asyncio.run(runner.run(next(iter(document.workflows)), params or {}))
    return outcome, runner, tools


def _doc(node: str) -> str:
    return f"""
domain: demo
workflows:
  w:
    graph:
      look:
{node}
"""


def test_criteria_alone_decide_so_an_expected_404_succeeds_and_outputs_read_the_answer() -> None:
    text = _doc("""        call: find
        output: look
        criteria:
          - condition: $status == 404
          - condition: "^no such"
            type: regex
            context: $result.detail
        outputs:
          code: $status
          why: $result.detail
          limit: $headers.x_rate_limit
""")
    answer = ToolResult(404, {"detail": "no such pet"}, {"X-Rate-Limit": "7", "Set-Cookie": "s=1"})
    outcome, runner, _ = _run(text, {"find": answer})
    assert outcome.status == "succeeded", outcome.error
    assert runner.nodes["look"].output == {"code": 404, "why": "no such pet", "limit": "7"}


def test_an_unmet_criterion_fails_the_call_naming_the_criterion() -> None:
    text = _doc("""        call: find
        criteria:
          - condition: $status == 200
          - condition: $[?@.status == 'sold']
            type: jsonpath
            context: $result.pets
""")
    outcome, _, _ = _run(text, {"find": {"pets": [{"status": "available"}]}})
    assert outcome.status == "failed"
    assert "success criteria not met: $[?@.status == 'sold'] (jsonpath)" in outcome.error["message"]


def test_jsonpath_and_xpath_criteria_hold_on_matching_answers() -> None:
    text = _doc("""        call: find
        criteria:
          - condition: $[?@.status == 'sold']
            type: jsonpath
            context: $result.pets
""")
    assert _run(text, {"find": {"pets": [{"status": "sold"}]}})[0].status == "succeeded"
    xml = _doc("""        call: find
        criteria:
          - condition: /pets/pet[@status='sold']
            type: xpath
""")
    body = "<pets><pet status='sold'/></pets>"
    assert _run(xml, {"find": body})[0].status == "succeeded"
    assert _run(xml, {"find": "<pets/>"})[0].status == "failed"
    bomb = "<!DOCTYPE x [<!ENTITY a 'aaaa'>]><pets>&a;</pets>"  # refused, never expanded
    assert _run(xml, {"find": bomb})[0].status == "failed"


def test_a_catastrophic_regex_stops_and_counts_as_not_met() -> None:
    text = _doc("""        call: find
        criteria:
          - condition: "^(a+)+$"
            type: regex
            context: $result.text
""")
    outcome, _, _ = _run(text, {"find": {"text": "a" * 40 + "!"}})
    assert outcome.status == "failed"
    assert "(regex)" in outcome.error["message"]


def test_criteria_failures_are_retried_while_retry_if_holds() -> None:
    text = _doc("""        call: poll
        criteria:
          - condition: $result.state == 'done'
        on_error: {retry: 3, retry_on: [criteria], retry_if: $status == 200}
""")
    answers = Responses([{"state": "pending"}, {"state": "pending"}, {"state": "done"}])
    outcome, _, tools = _run(text, {"poll": answers})
    assert outcome.status == "succeeded"
    assert len(tools.calls) == 3
    # retry_if that does not hold: no retry
    gated = text.replace("retry_if: $status == 200", "retry_if: $status == 201")
    outcome, _, tools = _run(gated, {"poll": Responses([{"state": "pending"}, {"state": "done"}])})
    assert outcome.status == "failed" and len(tools.calls) == 1


def test_a_branch_case_may_end_the_workflow() -> None:
    text = """
domain: demo
workflows:
  w:
    graph:
      look: {call: find, output: found}
      route:
        type: branch
        depends_on: [look]
        on:
          - when: $found.none
            end: true
        default: book
      book: {call: book}
"""
    outcome, runner, tools = _run(text, {"find": {"none": True}, "book": {}})
    assert outcome.status == "succeeded"
    assert [c[0] for c in tools.calls] == ["find"]
    assert runner.nodes["book"].status == "skipped"


@pytest.mark.parametrize(
    ("node", "rule", "where"),
    [
        (
            "        call: find\n        criteria: [{condition: '(', type: regex}]\n",
            "invalid_criterion",
            "criteria.0.condition",
        ),
        (
            "        call: find\n        criteria: [{condition: '$[?', type: jsonpath}]\n",
            "invalid_criterion",
            "criteria.0.condition",
        ),
        (
            "        call: find\n        criteria: [{condition: '$status ==='}]\n",
            "invalid_expression",
            "criteria.0.condition",
        ),
        (
            "        call: find\n        outputs: {x: $nothing.id}\n",
            "unknown_reference",
            "outputs.x",
        ),
    ],
)
def test_bad_criteria_and_outputs_are_refused_at_save_naming_the_place(
    node: str, rule: str, where: str
) -> None:
    report = validate_document(load_document(_doc(node), name="d.yaml"))
    found = [(v.rule, v.path) for v in report.errors]
    assert any(r == rule and p.endswith(where) for r, p in found), found


def test_criteria_and_outputs_read_the_same_from_xml() -> None:
    yaml_text = _doc("""        call: find
        criteria:
          - condition: $status == 404
          - {condition: "^no such", type: regex, context: $result.detail}
        outputs: {code: $status, why: $result.detail}
        on_error: {retry: 2, retry_on: [criteria], retry_if: $status == 503}
""")
    xml = """<workflows domain="demo"><workflow id="w"><graph>
  <step id="look"><call tool="find"/>
    <criterion condition="$status == 404"/>
    <criterion condition="^no such" type="regex" context="$result.detail"/>
    <outputs><output name="code" value="$status"/><output name="why" value="$result.detail"/>
    </outputs>
    <on_error retry="2" retry_on="criteria" retry_if="$status == 503"/>
  </step></graph></workflow></workflows>"""
    from_yaml = load_document(yaml_text, name="d.yaml").document.workflows["w"].graph["look"]
    from_xml = load_document(xml, name="d.xml").document.workflows["w"].graph["look"]
    assert from_xml == from_yaml


@pytest.mark.parametrize("kind", ["regex", "xpath", "jsonpath"])
def test_a_deeply_nested_pattern_is_refused_at_save_not_a_crash(kind: str) -> None:
    hostile = "(" * 900 + "a" + ")" * 900
    criteria = f"[{{condition: '{hostile}', type: {kind}}}]"
    text = _doc(f"        call: find\n        criteria: {criteria}\n")
    report = validate_document(load_document(text, name="d.yaml"))
    found = [v for v in report.errors if v.rule == "invalid_criterion"]
    assert found and "nests brackets 900 deep (at most 50)" in found[0].message
    assert found[0].path.endswith("criteria.0.condition")


def test_a_jsonpath_over_text_that_is_not_json_is_not_met_and_dollar_selects_it() -> None:
    text = _doc("""        call: find
        criteria:
          - condition: $[?@.ok]
            type: jsonpath
""")
    outcome, _, _ = _run(text, {"find": ToolResult(200, "{not json", {})})
    assert outcome.status == "failed"
    assert "success criteria not met: $[?@.ok] (jsonpath)" in outcome.error["message"]
    whole = _doc("""        call: find
        criteria:
          - {condition: $, type: jsonpath}
""")
    assert _run(whole, {"find": ToolResult(200, "plain text", {})})[0].status == "succeeded"
