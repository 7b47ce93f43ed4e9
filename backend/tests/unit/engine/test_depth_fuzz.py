"""Hypothesis: long graphs, deep answers, deep expressions and deep documents give a structured
answer (a report, a run outcome, a project error), never a RecursionError (issue 27, item 5).

Graphs are drawn up to 5,000 nodes (chains, ladders of diamonds, fallback chains, cycles);
answers, params and document values up to 3,000 levels; expressions up to the length limit.
Examples are few and bounded: a 5,000-node run takes about a second.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dynamic_tools.engine.criteria import Criterion, pattern_holds
from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.expressions import MAX_LENGTH, evaluate, parse_expression
from dynamic_tools.engine.graph import WorkflowGraph
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.params import check_values
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import DynamicToolsError, WorkflowInvalidError
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, TooDeep
from tests.support.plans import DocumentRunner

FEW = settings(max_examples=12, deadline=None, derandomize=True, database=None)
RUNS = settings(max_examples=4, deadline=None, derandomize=True, database=None)
ARGS = {"city": "AMS"}


def deep_value(depth: int, shape: str) -> Any:
    """A list or object nested ``depth`` levels (built without recursion)."""
    value: Any = 1
    for _ in range(depth):
        value = [value] if shape == "list" else {"a": value}
    return value


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A workflow of up to 5,000 calls: a chain, a ladder of diamonds, a chain of fallbacks,
    with a few extra edges that may close cycles."""
    size = draw(st.integers(min_value=1, max_value=5000))
    shape = draw(st.sampled_from(["chain", "ladder", "fallbacks"]))
    graph: dict[str, Any] = {}
    for i in range(size):
        node: dict[str, Any] = {"call": "search", "args": ARGS, "output": f"o{i}"}
        if shape == "chain" and i:
            node["depends_on"] = [f"n{i - 1}"]
        elif shape == "ladder" and i:  # n(i) waits for n(i-1) and n(i-2): 2^n paths back
            node["depends_on"] = [f"n{j}" for j in (i - 1, i - 2) if j >= 0]
        elif shape == "fallbacks" and i + 1 < size:  # each failure hands over to the next
            node["on_error"] = {"fallback": f"n{i + 1}"}
        if i and draw(st.integers(0, 20)) == 0:
            node["args"] = {"city": f"$o{i - 1}.0"}
        graph[f"n{i}"] = node
    for _ in range(draw(st.integers(0, 2))):
        a, b = draw(st.integers(0, size - 1)), draw(st.integers(0, size - 1))
        graph[f"n{a}"].setdefault("depends_on", []).append(f"n{b}")
    return {"graph": graph}


def _shaped(size: int, shape: str) -> dict[str, Any]:
    graph: dict[str, Any] = {}
    for i in range(size):
        node: dict[str, Any] = {"call": "search", "args": ARGS}
        if shape == "ladder" and i:
            node["depends_on"] = [f"n{j}" for j in (i - 1, i - 2) if j >= 0]
        elif shape == "fallbacks" and i + 1 < size:
            node["on_error"] = {"fallback": f"n{i + 1}"}
        graph[f"n{i}"] = node
    return {"graph": graph}


@FEW
@given(workflow=graphs())
@example(workflow=_shaped(5000, "ladder"))
@example(workflow=_shaped(5000, "fallbacks"))
def test_any_long_graph_gets_a_report_and_its_facts(workflow: dict[str, Any]) -> None:
    document = WorkflowDocument.model_validate({"domain": "fuzz", "workflows": {"w": workflow}})
    report = validate_document(document, known_tools={"search"})
    assert all(v.rule and v.message for v in report.violations)
    graph = WorkflowGraph(document.workflows["w"])
    last = list(graph.nodes)[-1]
    assert isinstance(graph.may_be_skipped(last), bool)
    assert isinstance(graph.unreachable(last), bool)
    assert isinstance(graph.guarded_by(last, "n0"), bool)
    assert all(cycle[0] == cycle[-1] for cycle in graph.cycles())


@RUNS
@given(length=st.integers(min_value=1, max_value=5000))
@example(length=5000)
def test_a_chain_of_any_length_runs_to_success(length: int) -> None:
    graph = {
        f"n{i}": {"call": "search", "args": ARGS, **({"depends_on": [f"n{i - 1}"]} if i else {})}
        for i in range(length)
    }
    workflows = {"w": {"graph": graph}}
    document = WorkflowDocument.model_validate({"domain": "f", "workflows": workflows})
    assert validate_document(document, known_tools={"search"}).ok
    tools = MockTools({"search": [{"id": 1}]})
    runner = DocumentRunner(
        document, run_id="r", tools=tools, steps=LocalSteps(), events=EventList()
    )
    outcome = asyncio.run(runner.run("w", {}))
    assert outcome.status == "succeeded", outcome.error
    assert len(tools.calls) == length


CRITERIA = [
    {"condition": "$..a", "type": "jsonpath"},
    {"condition": "$[?@.a]", "type": "jsonpath"},
    {"condition": "a", "type": "regex"},
    {"condition": "$result.a != null"},
    {"condition": "$result == $result"},
    {"condition": "len(str($result)) > 0"},
    {"condition": "jsonpath($result, '$..a')"},
]


@FEW
@given(
    depth=st.integers(min_value=0, max_value=3000),
    shape=st.sampled_from(["list", "object"]),
    as_text=st.booleans(),
    criterion=st.sampled_from(CRITERIA),
)
@example(depth=1220, shape="object", as_text=True, criterion=CRITERIA[0])
@example(depth=MAX_VALUE_DEPTH, shape="list", as_text=False, criterion=CRITERIA[1])
def test_a_deep_answer_read_by_criteria_and_outputs_ends_the_run_cleanly(
    depth: int, shape: str, as_text: bool, criterion: dict[str, Any], tmp_path_factory: Any
) -> None:
    body: Any = deep_value(depth, shape)
    headers = {}
    if as_text:  # how the HTTP sender hands over a JSON answer nested past its limit
        body = ("[" * depth + "1" + "]" * depth) if shape == "list" else _object_text(depth)
        headers = {"content-type": "application/json"}
    from dynamic_tools.engine.ports import ToolResult

    text = json.dumps(
        {
            "domain": "f",
            "workflows": {
                "w": {
                    "graph": {
                        "look": {
                            "call": "search",
                            "criteria": [criterion],
                            "outputs": {"first": "$result"},
                        }
                    }
                }
            },
        }
    )
    document = load_document(text, fmt="json").document
    tools = MockTools({"search": ToolResult(200, body, headers)})
    runner = DocumentRunner(
        document, run_id="r", tools=tools, steps=LocalSteps(), events=EventList()
    )
    outcome = asyncio.run(runner.run("w", {}))
    if outcome.status == "failed":
        message = outcome.error["message"]
        assert "unexpected" not in message, message
        if depth > MAX_VALUE_DEPTH and (not as_text or shape == "object" or depth > 0):
            assert "too deep" in message, message
    else:
        assert depth <= MAX_VALUE_DEPTH or (as_text and criterion["type"] == "regex"), outcome


def _object_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@FEW
@given(
    depth=st.integers(min_value=0, max_value=3000),
    shape=st.sampled_from(["list", "object"]),
    kind=st.sampled_from(["regex", "jsonpath", "xpath"]),
)
def test_pattern_criteria_hold_or_say_too_deep(depth: int, shape: str, kind: str) -> None:
    value = deep_value(depth, shape)
    contexts: list[Any] = [value, json.dumps(value) if depth < 900 else None]
    if kind == "xpath":
        contexts = ["<a>" * depth + "</a>" * depth]
    condition = {"regex": "1", "jsonpath": "$..*", "xpath": "//a"}[kind]
    for context in contexts:
        if context is None:
            continue
        try:
            held = pattern_holds(Criterion(condition=condition, type=kind), context)
        except TooDeep as exc:
            assert depth > MAX_VALUE_DEPTH and exc.limit == MAX_VALUE_DEPTH
        else:
            assert isinstance(held, bool)
            assert depth <= MAX_VALUE_DEPTH or (kind == "regex" and isinstance(context, str))


@FEW
@given(
    depth=st.integers(min_value=1, max_value=MAX_LENGTH),
    wrap=st.sampled_from(["(", "!", "-", "not ", "[", "len(", "+"]),
)
@example(depth=MAX_LENGTH // 2, wrap="(")
@example(depth=MAX_LENGTH // 2, wrap="+")
def test_a_deeply_nested_expression_parses_or_is_refused(depth: int, wrap: str) -> None:
    closer = {"(": ")", "[": "]", "len(": ")"}.get(wrap, "")
    if wrap == "+":  # a left-deep chain: 1 + 1 + … (no parser recursion, a deep tree)
        text = "+".join(["1"] * depth)[:MAX_LENGTH]
    else:
        count = depth // len(wrap + closer) or 1
        text = wrap * count + "$a" + closer * count
    try:
        expression = parse_expression(text, node_id="n")
    except ExpressionError as error:
        assert error.message
        return
    try:
        evaluate(expression, lambda ref: [1], node_id="n")
    except DynamicToolsError as error:
        assert error.message


@FEW
@given(
    depth=st.integers(min_value=1, max_value=5000),
    fmt=st.sampled_from(["json", "yaml", "xml"]),
    shape=st.sampled_from(["list", "object"]),
)
def test_a_deep_document_loads_or_names_the_limit(depth: int, fmt: str, shape: str) -> None:
    inner = "[" * depth + "1" + "]" * depth if shape == "list" else _object_text(depth)
    if fmt == "xml":
        text = (
            '<workflows domain="d"><workflow id="w"><graph><step id="s"><call tool="t"/>'
            f"<args><arg name='x' json='{inner}'/></args></step></graph></workflow>"
            + "<x>" * depth
            + "</x>" * depth
            + "</workflows>"
        )
    else:
        text = (
            '{"domain": "d", "workflows": {"w": {"graph": {"s": {"call": "t", "args": {"x": '
            + inner
            + "}}}}}}"
        )
    try:
        loaded = load_document(text, fmt=fmt)  # type: ignore[arg-type]
    except WorkflowInvalidError as error:
        assert error.violations and error.violations[0]["message"]
        return
    assert validate_document(loaded, known_tools={"t"}).violations is not None


@FEW
@given(depth=st.integers(min_value=0, max_value=3000), shape=st.sampled_from(["list", "object"]))
def test_run_params_of_any_depth_are_checked(depth: int, shape: str) -> None:
    from dynamic_tools.engine.node_parts import ParamSpec
    from dynamic_tools.errors import InvalidInputError

    try:
        values = check_values({"p": ParamSpec(type="any")}, {"p": deep_value(depth, shape)})
    except InvalidInputError as error:
        assert depth > MAX_VALUE_DEPTH
        assert error.violations[0]["rule"] == "max_depth"
        assert "actual" not in error.violations[0]  # never echoed: it would recurse
    else:
        assert depth <= MAX_VALUE_DEPTH and "p" in values
