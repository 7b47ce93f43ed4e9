"""Document workers: results and project errors come back whole; a task past its time or
memory budget, or whose worker dies, answers ProcessingLimitError naming the setting."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import AsyncIterator

import pytest

from dynamic_tools.document_workers import DocumentWorkers
from dynamic_tools.errors import ProcessingLimitError, WorkflowInvalidError


def _double(value: int) -> int:
    return value * 2


def _refuse(message: str) -> None:
    raise WorkflowInvalidError(message, violations=[{"path": "content", "rule": "r"}])


def _spin(seconds: float) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # pure CPU: only killing the process stops it
        pass
    return "finished"


def _hog() -> int:
    chunks = [bytearray(64 * 1024 * 1024) for _ in range(64)]  # 4 GiB
    return len(chunks)


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture
async def workers() -> AsyncIterator[DocumentWorkers]:
    pool = DocumentWorkers(workers=1, timeout_s=1.0, memory_mb=512)
    yield pool
    pool.close()


async def test_results_and_errors_cross_the_process_boundary(workers: DocumentWorkers) -> None:
    assert await workers.run(_double, 21) == 42
    with pytest.raises(WorkflowInvalidError) as caught:
        await workers.run(_refuse, "no")
    assert caught.value.violations == [{"path": "content", "rule": "r"}]


async def test_a_task_past_its_time_is_stopped_and_the_pool_goes_on(
    workers: DocumentWorkers,
) -> None:
    with pytest.raises(ProcessingLimitError) as caught:
        await workers.run(_spin, 30.0, field="source")
    error = caught.value
    assert error.context["setting"] == "DOCUMENT_TIMEOUT_S"
    assert error.violations[0]["path"] == "source"
    assert error.violations[0]["rule"] == "max_seconds"
    assert await workers.run(_double, 2) == 4  # a fresh worker took its place


async def test_a_task_past_its_memory_fails_in_the_worker() -> None:
    # A time limit far above what the allocation takes even on a loaded machine (a 1 s limit
    # ran out first under CPU contention): the memory limit is what must stop it.
    pool = DocumentWorkers(workers=1, timeout_s=60.0, memory_mb=512)
    try:
        with pytest.raises(ProcessingLimitError) as caught:
            await pool.run(_hog)
        assert caught.value.context["setting"] == "DOCUMENT_WORKER_MEMORY_MB"
        assert caught.value.violations[0]["rule"] == "max_memory"
        assert await pool.run(_double, 3) == 6
    finally:
        pool.close()


async def test_a_worker_that_dies_is_an_error_not_a_hang(workers: DocumentWorkers) -> None:
    with pytest.raises(ProcessingLimitError):
        await workers.run(_die)
    assert await workers.run(_double, 4) == 8


async def test_zero_workers_run_in_a_thread() -> None:
    assert await DocumentWorkers(workers=0).run(_double, 5) == 10


def _shared_answer(copies: int) -> dict[str, object]:
    shared = {"type": "object", "properties": {"id": {"type": "integer"}}}
    return {"tools": [{"name": f"t{n}", "schema": shared} for n in range(copies)]}


async def test_a_large_answer_comes_back_whole_as_one_blob(workers: DocumentWorkers) -> None:
    answer = await workers.run_large(_shared_answer, 3)
    tools = answer["tools"]
    assert [tool["name"] for tool in tools] == ["t0", "t1", "t2"]
    assert tools[0]["schema"] is tools[2]["schema"]  # shared once, as the worker built it
    with pytest.raises(WorkflowInvalidError) as caught:
        await workers.run_large(_refuse, "no")
    assert caught.value.violations == [{"path": "content", "rule": "r"}]


async def test_a_large_answer_keeps_the_time_and_memory_limits(
    workers: DocumentWorkers,
) -> None:
    with pytest.raises(ProcessingLimitError) as caught:
        await workers.run_large(_spin, 30.0, field="source")
    assert caught.value.violations[0]["rule"] == "max_seconds"
    assert caught.value.violations[0]["path"] == "source"
    pool = DocumentWorkers(workers=1, timeout_s=60.0, memory_mb=512)
    try:
        with pytest.raises(ProcessingLimitError) as memory:
            await pool.run_large(_hog)
        assert memory.value.violations[0]["rule"] == "max_memory"
    finally:
        pool.close()


async def test_zero_workers_hand_a_large_answer_back_unpickled() -> None:
    answer = await DocumentWorkers(workers=0).run_large(_shared_answer, 2)
    assert len(answer["tools"]) == 2
