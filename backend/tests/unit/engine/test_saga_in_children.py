"""Saga across parallel branches and foreach items (in-memory steps, mock tools).

A call inside a branch or an item registers its compensation in the child; however the child
ends (succeeded, failed, cancelled mid-way by a cancel of the run, the workflow's timeout or a
failed sibling), the parent keeps it, and the saga undoes it newest first: the branches' and
items' bookings (the last branch or item first), then what was booked before the fan-out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.ports import ToolResult
from tests.support.plans import DocumentRunner

DOCUMENT = """
domain: saga_children
workflows:
  book_then_wait:
    params: { flight: { type: str, required: true } }
    graph:
      book:
        call: create_booking
        args: { flight_id: $flight, passenger: Ada }
        output: booking
        compensate_with: { call: cancel_booking, args: { booking_id: $booking.id } }
      wait:
        call: slow_call
        depends_on: [book]
        args: { flight_id: $flight }

  book_then_fail:
    params: { flight: { type: str, required: true } }
    graph:
      book:
        call: create_booking
        args: { flight_id: $flight, passenger: Ada }
        output: booking
        compensate_with: { call: cancel_booking, args: { booking_id: $booking.id } }
      fail:
        call: broken_call
        depends_on: [book]
        args: {}

  fan_out:
    graph:
      first:
        call: create_booking
        args: { flight_id: F0, passenger: Ada }
        output: outbound
        compensate_with: { call: cancel_booking, args: { booking_id: $outbound.id } }
      both:
        type: parallel
        depends_on: [first]
        branches:
          a: { workflow: book_then_wait, args: { flight: FA } }
          b: { workflow: book_then_wait, args: { flight: FB } }

  fan_out_with_deadline:
    timeout: 0.5
    graph:
      both:
        type: parallel
        branches:
          a: { workflow: book_then_wait, args: { flight: FA } }
          b: { workflow: book_then_wait, args: { flight: FB } }

  one_branch_fails:
    graph:
      both:
        type: parallel
        branches:
          a: { workflow: book_then_wait, args: { flight: FA } }
          b: { workflow: book_then_fail, args: { flight: FB } }

  loop:
    graph:
      each:
        type: foreach
        items: [F1, F2, F3]
        as: flight
        max_iterations: 5
        step: { workflow: book_then_wait, args: { flight: $flight } }
"""


class HangingTools(MockTools):
    """Bookings answer at once; ``slow_call`` hangs until cancelled; ``broken_call`` fails
    once ``hang_before_failing`` slow calls hang (so the failure hits a running sibling)."""

    def __init__(self, hang_before_failing: int = 0) -> None:
        super().__init__(
            {
                "create_booking": lambda a: ToolResult(201, {"id": f"BK-{a['flight_id']}"}),
                "cancel_booking": lambda a: {"id": a["booking_id"], "status": "cancelled"},
                "broken_call": ToolResult(400, {"error": "no"}),
            }
        )
        self.hanging = 0
        self.hang_before_failing = hang_before_failing
        self.changed = asyncio.Event()

    def knows(self, tool: str) -> bool:
        return True

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        if tool == "slow_call":
            self.calls.append((tool, dict(args), idempotency_key))
            self.hanging += 1
            self.changed.set()
            await asyncio.Event().wait()  # until cancelled
        if tool == "broken_call":
            while self.hanging < self.hang_before_failing:
                self.changed.clear()
                await self.changed.wait()
        return await super().call(tool, args, idempotency_key=idempotency_key, timeout_s=timeout_s)

    async def until_hanging(self, count: int) -> None:
        while self.hanging < count:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 30)

    def undone(self) -> list[str]:
        return [c[1]["booking_id"] for c in self.calls if c[0] == "cancel_booking"]


def make(tools: HangingTools) -> tuple[DocumentRunner, LocalSteps, EventList]:
    document = load_document(DOCUMENT, name="saga_children.yaml").document
    steps, events = LocalSteps(), EventList()
    return (
        DocumentRunner(document, run_id="r", tools=tools, steps=steps, events=events),
        steps,
        events,
    )


async def test_cancel_during_a_parallel_undoes_the_branches_then_the_earlier_booking() -> None:
    tools = HangingTools()
    interp, steps, events = make(tools)
    task = asyncio.create_task(interp.run("fan_out", {}))
    await tools.until_hanging(2)

    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    assert task.cancelled()
    assert tools.undone() == ["BK-FB", "BK-FA", "BK-F0"]
    assert [n for n in steps.names if n.startswith("compensate:")] == [
        "compensate:saga:both/b/book",
        "compensate:saga:both/a/book",
        "compensate:saga:first",
    ]
    assert [e["name"] for e in events.of("compensated")] == [
        "saga:both/b/book",
        "saga:both/a/book",
        "saga:first",
    ]
    assert events.events[-1]["type"] == "run_cancelled"
    assert interp.nodes["both/a/wait"].status == "cancelled"
    assert interp.nodes["both/a/book"].status == "succeeded"


async def test_cancel_during_a_foreach_undoes_every_item_newest_first() -> None:
    tools = HangingTools()
    interp, _, _ = make(tools)
    task = asyncio.create_task(interp.run("loop", {}))
    await tools.until_hanging(3)

    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    assert tools.undone() == ["BK-F3", "BK-F2", "BK-F1"]
    keys = [c[2] for c in tools.calls if c[0] == "cancel_booking"]
    assert keys == [f"r:saga:each/{i}/book" for i in (2, 1, 0)]


async def test_a_workflow_timeout_during_a_parallel_undoes_the_branches() -> None:
    tools = HangingTools()
    interp, _, _ = make(tools)

    outcome = await asyncio.wait_for(interp.run("fan_out_with_deadline", {}), 30)

    assert outcome.status == "failed"
    assert outcome.error["message"] == "the workflow timed out after 0.5 s"
    assert tools.hanging == 2  # both branches had booked and were waiting
    assert tools.undone() == ["BK-FB", "BK-FA"]


async def test_a_failed_branch_undoes_its_own_booking_and_the_cancelled_siblings() -> None:
    tools = HangingTools(hang_before_failing=1)
    interp, _, _ = make(tools)

    outcome = await asyncio.wait_for(interp.run("one_branch_fails", {}), 30)

    assert outcome.status == "failed"
    assert "a failed: cancelled: another child failed" in outcome.error["message"]
    assert "b failed: broken_call answered HTTP 400" in outcome.error["message"]
    # Branch a booked and was stopped mid-call; branch b booked, then failed.
    assert tools.undone() == ["BK-FB", "BK-FA"]
