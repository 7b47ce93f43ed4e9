"""The journal's one conversion pair: records decode from the JSON older code journaled and
encode back to the same JSON; a replay of an old call record drives the call node; bad data is
a JournalError naming where, never a deep recursion."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, TypeVar

import pytest

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.call_context import CallContext
from dynamic_tools.engine.call_record import CallFailure, CallRecord
from dynamic_tools.engine.children import ChildResult, ChildSpec, child_result
from dynamic_tools.engine.journal import MAX_TYPE_DEPTH, JournalError, from_json, to_json
from dynamic_tools.engine.local import LocalSteps, MockTools, Responses
from dynamic_tools.engine.models import CallNode
from dynamic_tools.engine.ports import ChildOutcome, ToolResult
from dynamic_tools.engine.redrive import Redrive
from dynamic_tools.engine.saga import Compensation
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import NodeState, RunFailed, RunOutcome
from dynamic_tools.engine.tool_calls import call_with_retries

T = TypeVar("T")

# What the engine journaled before its records were typed (the hand-written dicts of
# tool_calls.py and the to_dict methods), literally.
OLD_CALL_RECORDS: list[dict[str, Any]] = [
    {"ok": True, "status_code": 200, "body": {"id": "FL1"}},
    {"ok": True, "status_code": 201, "body": {"id": 7}, "headers": {"location": "/b/7"}},
    {"ok": True, "status_code": 204, "body": None},
    {"ok": True, "status_code": 200, "body": '{"a": [[[]]]}', "too_deep": 64},
    {
        "ok": False,
        "failure": {
            "kind": "status",
            "message": "HTTP 503 Service Unavailable: busy",
            "status_code": 503,
            "retry_after_s": 2.0,
        },
        "status_code": 503,
        "body": {"message": "busy"},
        "headers": {"retry-after": "2"},
    },
    {
        "ok": False,
        "failure": {
            "kind": "transport",
            "message": "connection reset",
            "status_code": None,
            "retry_after_s": None,
        },
    },
    {"ok": True, "status_code": None, "body": [{"n": 1}]},  # sql_query
]


@pytest.mark.parametrize("old", OLD_CALL_RECORDS)
def test_an_old_call_record_decodes_to_a_typed_record_and_encodes_to_the_same_dict(
    old: dict[str, Any],
) -> None:
    record = from_json(CallRecord, json.loads(json.dumps(old)))
    assert isinstance(record, CallRecord) and record.ok is old["ok"]
    assert record.status_code == old.get("status_code") and record.body == old.get("body")
    assert record.headers == old.get("headers", {}) and record.too_deep == old.get("too_deep")
    if "failure" in old:
        assert isinstance(record.failure, CallFailure)
        assert record.failure == CallFailure(**old["failure"])
    else:
        assert record.failure is None
    assert to_json(record) == old


class Replaying:
    """A step runner that answers from a journal (as a durable replay does), never running."""

    def __init__(self, journal: dict[str, Any]) -> None:
        self.journal = journal

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        return self.journal[name]  # type: ignore[no-any-return]

    async def sleep(self, name: str, seconds: float) -> None:
        return None


def _context(steps: Any, state: NodeState, tools: MockTools | None = None) -> CallContext:
    async def emit(event: ev.Event) -> None:
        return None

    return CallContext(
        run_id="r", tools=tools or MockTools({}), steps=steps, emit=emit, state=state, base_url=None
    )


async def test_a_call_replays_from_a_journal_the_old_code_wrote() -> None:
    journal = {"call:book:1": OLD_CALL_RECORDS[4], "call:book:2": OLD_CALL_RECORDS[1]}
    node = CallNode.model_validate(
        {"call": "book", "on_error": {"retry": 1}, "outputs": {"id": "$result.id"}}
    )
    state = NodeState()
    out = await call_with_retries(
        _context(Replaying(journal), state), node, "book", {}, idempotency_key="k", scope=Scope()
    )
    assert out == {"id": 7} and state.attempts == 2 and state.detail == {"status_code": 201}

    refused = {"call:book:1": OLD_CALL_RECORDS[5]}
    with pytest.raises(RunFailed) as failed:
        await call_with_retries(
            _context(Replaying(refused), NodeState()),
            CallNode.model_validate({"call": "book"}),
            "book",
            {},
            idempotency_key="k",
            scope=Scope(),
        )
    assert failed.value.message == "book failed: connection reset"


async def test_a_call_journals_its_attempt_in_the_old_form() -> None:
    journaled: dict[str, Any] = {}

    class Recording(LocalSteps):
        async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
            journaled[name] = result = await super().step(name, fn)
            return result

    tools = MockTools({"search": Responses([ToolResult(503, {"message": "busy"})])})
    with pytest.raises(RunFailed):
        await call_with_retries(
            _context(Recording(), NodeState(), tools),
            CallNode.model_validate({"call": "search"}),
            "search",
            {},
            idempotency_key="k",
            scope=Scope(),
        )
    assert journaled["call:search:1"] == {
        "ok": False,
        "status_code": 503,
        "body": {"message": "busy"},
        "failure": {
            "kind": "status",
            "message": "HTTP 503 Service Unavailable: busy",
            "status_code": 503,
            "retry_after_s": None,
        },
    }


def test_children_saga_scope_redrive_and_outcomes_keep_their_old_json() -> None:
    node = {
        "status": "succeeded",
        "input": {"q": 1},
        "output": {"ok": 1},
        "error": None,
        "attempts": 1,
        "started_at": "2026-01-01T00:00:00.000+00:00",
        "ended_at": None,
        "detail": {"status_code": 200},
    }
    compensation = {
        "node_id": "loop/2/book",
        "call": "cancel",
        "args": {"id": 9},
        "ignore_error": False,
    }
    scope = {
        "params": {"p": 1},
        "outputs": {},
        "yields": {},
        "local": {"item": "x"},
        "failure": None,
    }
    spec = {
        "child_id": "loop/2",
        "workflow_id": "w",
        "node_id": "loop",
        "prefix": "loop/2/",
        "scope": scope,
        "id": "r/loop/2",
        "seq_base": 1200000,
        "iteration": 2,
    }
    result = {"value": {"ok": 1}, "compensations": [compensation], "nodes": {"loop/2": node}}
    outcome = {"ok": False, "value": result, "error": "item 2 broke", "cancelled": False}
    redrive = {"from_run": "old", "outputs": {"search": [1]}, "inputs": {"search": {}}}
    run = {"status": "failed", "result": None, "error": {"message": "x"}, "nodes": {"a": node}}
    cases: list[tuple[Any, dict[str, Any]]] = [
        (Compensation, compensation),
        (Scope, scope),
        (ChildSpec, spec),
        (ChildResult, result),
        (ChildOutcome, outcome),
        (Redrive, redrive),
        (RunOutcome, run),
        (NodeState, node),
    ]
    for kind, old in cases:
        decoded = from_json(kind, json.loads(json.dumps(old)))
        assert isinstance(decoded, kind)
        assert to_json(decoded) == old, kind.__name__
    decoded_spec = from_json(ChildSpec, spec)
    assert decoded_spec.branch is None and decoded_spec.scope.lookup("item") == "x"
    decoded_outcome = from_json(ChildOutcome, outcome)
    assert decoded_outcome.value is not None
    assert decoded_outcome.value.compensations == (
        Compensation("loop/2/book", "cancel", {"id": 9}),
    )
    assert decoded_outcome.value.nodes["loop/2"].status == "succeeded"
    assert child_result(result) == decoded_outcome.value and child_result([]) is None
    # a node state journaled with fewer keys (an older version) takes the defaults
    assert from_json(NodeState, {"status": "skipped"}) == NodeState(status="skipped")
    # runs_again is not journaled
    assert "runs_again" not in to_json(Redrive("old", runs_again={"a": "why"}))


class Colour(Enum):
    RED = "red"


@dataclass(frozen=True)
class Leaf:
    colour: Colour
    weight: float
    tags: tuple[str, ...] = ()
    mode: Literal["a", "b"] = "a"


@dataclass(frozen=True)
class Tree:
    name: str
    leaves: list[Leaf] = field(default_factory=list)
    by_name: dict[str, Leaf] = field(default_factory=dict)
    best: Leaf | None = None
    extra: Any = None


def test_nested_records_enums_tuples_and_optionals_round_trip() -> None:
    tree = Tree(
        "t",
        leaves=[Leaf(Colour.RED, 1.5, ("x",))],
        by_name={"b": Leaf(Colour.RED, 2.0, mode="b")},
        best=None,
        extra={"any": [1, {"json": True}]},
    )
    data = to_json(tree)
    assert data["leaves"] == [{"colour": "red", "weight": 1.5, "tags": ["x"], "mode": "a"}]
    assert from_json(Tree, json.loads(json.dumps(data))) == tree
    assert from_json(Leaf, {"colour": "red", "weight": 3}).weight == 3.0  # a JSON integer
    assert from_json(list[Leaf], [{"colour": "red", "weight": 1}])[0].colour is Colour.RED
    assert from_json(Tree, {"name": "t", "unknown": 1}) == Tree("t")  # newer keys are ignored


@pytest.mark.parametrize(
    ("kind", "data", "where"),
    [
        (Tree, {"leaves": []}, "Tree needs 'name'"),
        (Tree, {"name": 1}, "$.name: expected str"),
        (Tree, {"name": "t", "leaves": [{"colour": "blue", "weight": 1}]}, "$.leaves[0].colour"),
        (Tree, {"name": "t", "best": {"colour": "red", "weight": 1, "mode": "c"}}, "$.best"),
        (Leaf, {"colour": "red", "weight": True}, "$.weight: expected float"),
        (CallRecord, {"__dynamic_tools_run_cancelled__": True}, "CallRecord needs 'ok'"),
        (CallRecord, [], "expected an object for CallRecord"),
        (RunOutcome, {"status": "exploded"}, "$.status: expected one of"),
    ],
)
def test_data_of_the_wrong_shape_is_a_journal_error_naming_where(
    kind: Any, data: Any, where: str
) -> None:
    with pytest.raises(JournalError) as caught:
        from_json(kind, data)
    assert where in str(caught.value)


@dataclass(frozen=True)
class Chain:
    next: Chain | None = None


def test_nesting_past_the_bound_is_refused_not_recursed() -> None:
    deep: dict[str, Any] = {}
    for _ in range(MAX_TYPE_DEPTH + 5):
        deep = {"next": deep}
    with pytest.raises(JournalError, match="nested deeper than"):
        from_json(Chain, deep)
    chain = Chain()
    for _ in range(MAX_TYPE_DEPTH + 5):
        chain = Chain(chain)
    with pytest.raises(JournalError, match="nested deeper than"):
        to_json(chain)
    # outside data under an Any field is passed through, however deep
    body: Any = []
    for _ in range(5000):
        body = [body]
    assert from_json(CallRecord, {"ok": True, "status_code": 200, "body": body}).body is body
    assert to_json(CallRecord(ok=True, status_code=200, body=body))["body"] is body
