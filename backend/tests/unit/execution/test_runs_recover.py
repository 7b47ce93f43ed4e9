"""Recovering the runs of a live executor is a conflict of its own kind."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.engine.local import EventList, MockTools
from dynamic_tools.errors import ConflictError
from dynamic_tools.execution.launcher import LocalLauncher
from dynamic_tools.execution.runs import RunService


class AliveLauncher:
    """A launcher whose take-over refuses: the executor holds its lock."""

    async def take_over(self, executor_id: str) -> list[str]:
        raise ConflictError(
            f"executor '{executor_id}' is alive", context={"executor_id": executor_id}
        )


async def test_a_live_executor_is_an_executor_alive_conflict() -> None:
    service = RunService(workflows=None, store=None, launcher=AliveLauncher())  # type: ignore[arg-type]
    with pytest.raises(ConflictError) as raised:
        await service.recover("replica-b")
    assert raised.value.kind == "executor_alive"
    assert raised.value.context == {"executor_id": "replica-b"}


async def test_runs_that_are_not_durable_are_their_own_kind() -> None:
    local = LocalLauncher(tools=MockTools({}), events=EventList())
    service: Any = RunService(workflows=None, store=None, launcher=local)  # type: ignore[arg-type]
    with pytest.raises(ConflictError) as raised:
        await service.recover("replica-b")
    assert raised.value.kind == "not_durable"
