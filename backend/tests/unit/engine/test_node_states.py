"""Node states that tell the truth: a branch's other path is skipped as soon as the branch
decides (so a join after it runs), nodes a failed run never reached are not_run, and a
running call shows its input before it answers."""

from __future__ import annotations

import asyncio
from typing import Any

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.ports import ToolResult
from tests.support.plans import DocumentRunner

DOCUMENT = """
domain: d
workflows:
  w:
    graph:
      a: {call: t, output: x}
      decide:
        type: branch
        depends_on: [a]
        on:
          - when: "$x.n > 0"
            goto: left
          - default:
            goto: right
      left: {call: t}
      right: {call: t}
      join: {call: t, depends_on: [left, right]}
      last: {call: u, depends_on: [join], args: {joined: yes}}
"""


async def _run(
    mocks: dict[str, Any], tools: Any = None, events: EventList | None = None
) -> tuple[Any, EventList]:
    document = load_document(DOCUMENT, name="d.yaml").document
    events = events if events is not None else EventList()
    runner = DocumentRunner(
        document,
        run_id="r",
        tools=tools or MockTools(mocks),
        steps=LocalSteps(),
        events=events,
    )
    return await asyncio.wait_for(runner.run("w", {}), 5), events


def _states(outcome: Any) -> dict[str, str]:
    return {node_id: state.status for node_id, state in outcome.nodes.items()}


async def test_the_path_not_taken_is_skipped_at_once_and_the_join_runs() -> None:
    outcome, events = await _run({"t": {"n": 1}, "u": {"ok": True}})
    assert outcome.status == "succeeded"
    assert _states(outcome) == {
        "a": "succeeded",
        "decide": "succeeded",
        "left": "succeeded",
        "right": "skipped",
        "join": "succeeded",
        "last": "succeeded",
    }
    order = [(e["type"], e.get("node_id")) for e in events.events]
    # skipped right after the branch decided, before the chosen path started
    assert order.index(("node_skipped", "right")) < order.index(("node_started", "left"))
    assert outcome.nodes["right"].error == "not activated"


async def test_nodes_a_failed_run_never_reached_are_not_run() -> None:
    outcome, events = await _run({"t": {"n": 1}, "u": ToolResult(404, {"message": "no such"})})
    assert outcome.status == "failed"
    assert _states(outcome)["right"] == "skipped"  # the branch decided: skipped, not not_run
    assert outcome.nodes["last"].status == "failed"
    outcome, events = await _run({"t": ToolResult(500, {"detail": "down"}), "u": {}})
    assert _states(outcome) == {
        "a": "failed",
        "decide": "not_run",
        "left": "not_run",
        "right": "not_run",
        "join": "not_run",
        "last": "not_run",
    }
    not_run = [e for e in events.events if e["type"] == "node_not_run"]
    assert [e["node_id"] for e in not_run] == ["decide", "left", "right", "join", "last"]
    assert not_run[0]["reason"] == "the run failed before it"
    assert outcome.error["api_message"] == "down" and outcome.error["status_code"] == 500


class HeldTools(MockTools):
    """Holds every call of ``u`` until released, so the test sees it running."""

    def __init__(self) -> None:
        super().__init__({"t": {"n": 1}, "u": {"ok": True}})
        self.release = asyncio.Event()

    async def call(self, tool: str, args: Any, **options: Any) -> ToolResult:
        if tool == "u":
            await self.release.wait()
        return await super().call(tool, args, **options)


async def test_a_running_call_shows_its_input_before_it_answers() -> None:
    tools, events = HeldTools(), EventList()
    task = asyncio.create_task(_run({}, tools=tools, events=events))
    for _ in range(500):  # bounded: 5 s
        await asyncio.sleep(0.01)
        if any(e["type"] == "node_input" and e["node_id"] == "last" for e in events.events):
            break
    # `last` is still waiting for its answer, and its input is already out
    assert not any(e["type"] == "node_succeeded" and e["node_id"] == "last" for e in events.events)
    inputs = [e for e in events.events if e["type"] == "node_input" and e["node_id"] == "last"]
    assert inputs and inputs[0]["input"] == {"joined": "yes"}
    tools.release.set()
    outcome, _ = await task
    assert outcome.status == "succeeded"
    assert outcome.nodes["last"].input == {"joined": "yes"}
