"""The interpreter's collaborators on their own: scope, saga, child specs and results, and one
call through a CallContext (no interpreter needed)."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.call_context import CallContext
from dynamic_tools.engine.children import ChildResult, ChildSpec, child_result
from dynamic_tools.engine.errors import EngineError
from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.local import LocalSteps, MockTools, Responses
from dynamic_tools.engine.models import CallNode
from dynamic_tools.engine.ports import ChildCancelled, ChildFailed, GatherCancelled, ToolResult
from dynamic_tools.engine.saga import Compensation, Saga
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import FallbackTriggered, NodeState, RunFailed
from dynamic_tools.engine.tool_calls import call_with_retries


def test_scope_lookup_order_and_copies() -> None:
    scope = Scope(params={"x": "param"}, outputs={"x": "output", "y": 1}, yields={"ask": {}})
    assert scope.lookup("x") == "param"  # params before outputs
    local = scope.with_local("x", "local")
    assert local.lookup("x") == "local" and scope.lookup("x") == "param"
    local.set_output("z", 2)
    assert "z" not in scope.outputs  # outputs are copied for the local scope
    with pytest.raises(KeyError):
        scope.lookup("error")
    assert Scope(failure={"message": "boom"}).lookup("error") == {"message": "boom"}
    child = scope.copy()
    child.set_output("w", 3)
    assert "w" not in scope.outputs and child.lookup("y") == 1  # a child sets its own outputs
    assert from_json(Scope, to_json(scope)).outputs == scope.outputs


def test_the_saga_undoes_newest_first_with_childrens_after_its_own() -> None:
    saga = Saga()
    saga.register(Compensation("hold", "release", {"id": 1}))
    saga.extend([Compensation("a/0/book", "cancel", {"id": 2}), Compensation("a/1/book", "x", 3)])
    assert [c.node_id for c in saga.newest_first()] == ["a/1/book", "a/0/book", "hold"]
    assert len(saga) == 3
    assert from_json(Compensation, to_json(saga.entries[0])) == saga.entries[0]


def test_child_specs_and_results_keep_their_json_form() -> None:
    spec = ChildSpec(
        id="r/loop/2",
        child_id="loop/2",
        workflow_id="w",
        node_id="loop",
        prefix="loop/2/",
        scope=Scope(params={"p": 1}, local={"item": "x"}),
        seq_base=1200000,
        iteration=2,
    )
    data = to_json(spec)
    assert data["iteration"] == 2 and "branch" not in data and data["seq_base"] == 1200000
    assert to_json(from_json(ChildSpec, data)) == data
    result = ChildResult(
        value={"ok": 1},
        compensations=(Compensation("loop/2/book", "cancel", {"id": 9}),),
        nodes={"loop/2": NodeState(status="succeeded", output={"ok": 1})},
    )
    assert from_json(ChildResult, to_json(result)) == result
    assert child_result(to_json(result)) == result
    assert child_result({"unexpected": True}) is None


def test_control_flow_errors_share_one_root_and_cancellations_stay_cancellations() -> None:
    empty = ChildResult()
    errors: list[BaseException] = [
        RunFailed("x", node_id="n", attempt=2),
        FallbackTriggered("x", "recover", {"node_id": "n", "attempts": 3}),
        ChildFailed("x", empty, node_id="loop/1"),
        ChildCancelled(empty, node_id="loop/1"),
        GatherCancelled([]),
    ]
    for error in errors:
        assert isinstance(error, EngineError)
    assert isinstance(errors[3], __import__("asyncio").CancelledError)
    assert not isinstance(errors[3], Exception)  # `except Exception` never swallows it
    assert errors[0].attempt == 2 and errors[1].node_id == "n" and errors[1].attempt == 3


def context(tools: MockTools, state: NodeState, sink: list[ev.Event]) -> CallContext:
    async def emit(event: ev.Event) -> None:
        sink.append(event)

    return CallContext(
        run_id="r", tools=tools, steps=LocalSteps(), emit=emit, state=state, base_url=None
    )


async def test_one_call_retries_through_its_context_alone() -> None:
    tools = MockTools(
        {"search": Responses([ToolResult(503, {"message": "busy"}), ToolResult(200, ["FL1"])])}
    )
    state, seen = NodeState(), []
    node = CallNode.model_validate({"call": "search", "on_error": {"retry": 1}})
    body: Any = await call_with_retries(
        context(tools, state, seen), node, "search", {}, idempotency_key="r:search", scope=Scope()
    )
    assert body == ["FL1"] and state.attempts == 2
    assert [type(e) for e in seen] == [ev.AttemptFailed, ev.RetryScheduled]
    assert [key for _, _, key in tools.calls] == ["r:search", "r:search"]


async def test_a_call_out_of_retries_fails_the_run_with_its_attempt() -> None:
    tools = MockTools({"book": Responses([ToolResult(409, {"message": "sold out"})])})
    state, seen = NodeState(), []
    node = CallNode.model_validate({"call": "book"})
    with pytest.raises(RunFailed) as failed:
        await call_with_retries(
            context(tools, state, seen), node, "book", {}, idempotency_key="r:book", scope=Scope()
        )
    assert "book answered HTTP 409 Conflict: sold out" in failed.value.message
    assert failed.value.context["attempts"] == 1 and failed.value.attempt == 1
