"""Dry runs: a workflow run against mock responses, with no I/O and nothing recorded.

Each mock is the body of a 200 answer, or ``{"status_code": ..., "body": ..., "headers": ...}``
when it has a ``status_code`` key, or a list of those wrapped as ``{"responses": [...]}`` used
one per call (the last repeats). Yields are answered from ``answers`` (node id → values); a
yield without an answer ends the dry run as ``waiting_input``. Delays are not waited out.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.journal import to_json
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools, Responses
from dynamic_tools.engine.plan import RunPlan
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, find_too_deep

DRY_RUN_TIMEOUT_S = 30.0


def to_mock(spec: Any) -> Any:
    """One mock from its JSON form."""
    if isinstance(spec, dict) and "responses" in spec and isinstance(spec["responses"], list):
        return Responses([to_mock(item) for item in spec["responses"]])
    if isinstance(spec, dict) and isinstance(spec.get("status_code"), int):
        return ToolResult(spec["status_code"], spec.get("body"), spec.get("headers") or {})
    return spec


async def dry_run(
    plan: RunPlan,
    params: dict[str, Any],
    *,
    mocks: dict[str, Any],
    answers: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Run the plan against ``mocks``: the outcome, the events and the calls made.

    ``params`` are already checked (:func:`~dynamic_tools.engine.params.check_values`). A mock
    or an answer nested past :data:`~dynamic_tools.safe_parsing.MAX_VALUE_DEPTH` levels is refused
    (:class:`InvalidInputError`, rule ``max_depth``), as an API's answer that deep would be.
    """
    _check_depths({"mocks": mocks, "answers": answers})
    tools = MockTools({name: to_mock(spec) for name, spec in mocks.items()})
    steps, events = LocalSteps(), EventList()
    for node_id, values in answers.items():
        steps.answer(f"yield:{node_id}", values)
    interpreter = Interpreter(plan, run_id="dry-run", tools=tools, steps=steps, events=events)
    task = asyncio.create_task(interpreter.run(params))
    while not task.done():
        await asyncio.sleep(0.005)
        unanswered = [n for n in steps.waiting() if n.removeprefix("yield:") not in answers]
        if unanswered:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return _report(
                "waiting_input",
                None,
                {"message": "no answer for " + ", ".join(unanswered)},
                interpreter,
                events,
                tools,
            )
    outcome = await asyncio.wait_for(task, DRY_RUN_TIMEOUT_S)
    return _report(outcome.status, outcome.result, outcome.error, interpreter, events, tools)


def _check_depths(parts: dict[str, dict[str, Any]]) -> None:
    violations: list[dict[str, Any]] = [
        {
            "path": f"{part}.{name}",
            "rule": "max_depth",
            "message": f"too deep: nested past {MAX_VALUE_DEPTH} levels",
            "expected": MAX_VALUE_DEPTH,
        }
        for part, values in parts.items()
        for name, value in values.items()
        # one level more: a mock may wrap its body in {status_code, body} or {responses: [...]}
        if find_too_deep(value, MAX_VALUE_DEPTH + 2) is not None
    ]
    if violations:
        names = ", ".join(str(v["path"]) for v in violations)
        raise InvalidInputError(f"too deep: {names}", violations=violations)


def _report(
    status: str,
    result: Any,
    error: Any,
    interpreter: Interpreter,
    events: EventList,
    tools: MockTools,
) -> dict[str, Any]:
    return {
        "status": status,
        "result": result,
        "error": error,
        "nodes": to_json(interpreter.nodes),
        "calls": [{"tool": t, "args": a, "idempotency_key": k} for t, a, k in tools.calls],
        "events": events.events,
    }
