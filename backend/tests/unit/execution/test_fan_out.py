"""FanOut: children run in place with a journal of finished items (no DBOS involved here)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dynamic_tools.engine.children import ChildResult, ChildSpec
from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.ports import ChildFailed, ChildOutcome, StepRunner
from dynamic_tools.engine.scope import Scope
from dynamic_tools.execution.fan_out import FanOut, ItemSteps


class MemoryJournal:
    def __init__(self, stored: dict[int, dict[str, Any]] | None = None, *, broken: bool = False):
        self.stored = dict(stored or {})
        self.broken = broken

    async def finished(self, run_id: str, fan_out: str) -> dict[int, dict[str, Any]]:
        return dict(self.stored)

    async def record(self, run_id: str, fan_out: str, item: int, outcome: dict[str, Any]) -> None:
        if self.broken:
            raise OSError("disk full")
        self.stored[item] = outcome

    async def forget(self, run_id: str, fan_out: str) -> None:
        self.stored.clear()


def specs(count: int) -> list[ChildSpec]:
    return [
        ChildSpec(
            id=f"r/each/{i}",
            child_id=f"each/{i}",
            workflow_id="w",
            node_id="each",
            prefix=f"each/{i}/",
            scope=Scope(),
            seq_base=i,
            iteration=i,
        )
        for i in range(count)
    ]


class Children:
    """Runs children: ``fail`` ones fail at once, the others return their index after 20 ms;
    records the order they start in."""

    def __init__(self, fail: frozenset[int] = frozenset()) -> None:
        self.started: list[int] = []
        self.running = self.most = 0
        self.fail = fail

    async def __call__(self, spec: ChildSpec, steps: StepRunner | None = None) -> ChildResult:
        assert isinstance(steps, ItemSteps)
        index = int(spec.iteration or 0)
        self.started.append(index)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            if index in self.fail:
                raise ChildFailed(f"item {index} broke", ChildResult())
            await asyncio.sleep(0.02)
            return ChildResult(value=index)
        finally:
            self.running -= 1


def fan_out(children: Children, journal: MemoryJournal, **options: Any) -> FanOut:
    return FanOut(
        run_id="r",
        name="foreach:each",
        children=specs(options.pop("count", 6)),
        run_child=children,
        concurrency=options.pop("concurrency", 2),
        fail_fast=options.pop("fail_fast", True),
        journal=journal,
        interrupted=options.pop("interrupted", asyncio.Event()),
    )


async def test_children_start_in_list_order_within_the_concurrency_and_are_journaled() -> None:
    children, journal = Children(), MemoryJournal()
    result = await fan_out(children, journal).run()

    assert children.started == [0, 1, 2, 3, 4, 5]
    assert children.most == 2
    assert [from_json(ChildOutcome, o).value.value for o in result["outcomes"]] == list(range(6))
    assert sorted(journal.stored) == list(range(6))
    assert result["cancelled"] is False


async def test_journaled_children_are_not_run_again() -> None:
    done = {i: to_json(ChildOutcome(True, value=ChildResult(value=f"was {i}"))) for i in (0, 2)}
    children = Children()
    result = await fan_out(children, MemoryJournal(done), count=4).run()

    assert children.started == [1, 3]
    values = [from_json(ChildOutcome, o).value.value for o in result["outcomes"]]
    assert values == ["was 0", 1, "was 2", 3]


async def test_a_journaled_failure_starts_nothing_when_failing_fast() -> None:
    failed = {1: to_json(ChildOutcome(False, value=ChildResult(), error="item 1 broke"))}
    children = Children()
    result = await fan_out(children, MemoryJournal(failed), count=4).run()

    assert children.started == []
    errors = [o["error"] for o in result["outcomes"]]
    assert (
        errors
        == ["cancelled before it started", "item 1 broke"] + ["cancelled before it started"] * 2
    )


async def test_a_failure_stops_the_running_sibling_and_starts_no_more() -> None:
    children = Children(fail=frozenset({0}))
    result = await fan_out(children, MemoryJournal(), count=5).run()

    assert children.started == [0, 1]
    errors = [o["error"] for o in result["outcomes"]]
    assert errors[:2] == ["item 0 broke", "cancelled: another child failed"]
    assert set(errors[2:]) == {"cancelled before it started"}
    assert result["cancelled"] is False


async def test_without_failing_fast_every_child_runs_whatever_fails() -> None:
    children = Children(fail=frozenset({0, 3}))
    result = await asyncio.wait_for(
        fan_out(children, MemoryJournal(), count=5, fail_fast=False).run(), 5
    )

    assert sorted(children.started) == [0, 1, 2, 3, 4]
    assert [o["ok"] for o in result["outcomes"]] == [False, True, True, False, True]
    assert result["cancelled"] is False


async def test_an_interrupted_run_starts_nothing_and_says_it_was_cancelled() -> None:
    stop = asyncio.Event()
    stop.set()
    children = Children()
    result = await fan_out(children, MemoryJournal(), interrupted=stop).run()

    assert children.started == []
    assert result["cancelled"] is True


async def test_a_child_is_counted_even_when_its_journal_write_fails() -> None:
    children = Children()
    result = await fan_out(children, MemoryJournal(broken=True), count=2).run()

    assert all(o["ok"] for o in result["outcomes"])


async def test_item_steps_refuse_what_a_repeatable_step_never_does() -> None:
    steps = ItemSteps()
    with pytest.raises(RuntimeError, match="waits for input"):
        await steps.wait_for_input("ask", None)
    assert await steps.step("call:x:1", _one) == 1


async def _one() -> int:
    return 1
