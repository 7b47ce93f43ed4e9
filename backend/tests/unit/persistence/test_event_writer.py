"""The event writer: batches, flushes, a failing database, a bounded queue (no database here)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from loguru import logger

from dynamic_tools.engine import events as ev
from dynamic_tools.persistence import event_writer as module
from dynamic_tools.persistence.event_writer import EventWriter
from dynamic_tools.persistence.run_store import RunStore


def event(seq: int) -> ev.Event:
    return ev.RunStarted(workflow_id="w").stamped(run_id="r", seq=seq, at="")


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "RETRY_PAUSES_S", (0.0, 0.0))


async def test_flush_waits_for_everything_put_before_it() -> None:
    written: list[int] = []
    writer = EventWriter(lambda events: written.extend(e.seq or 0 for e in events))
    for seq in range(1, 101):
        writer.put(event(seq))
    await writer.flush()
    assert written == list(range(1, 101)) and writer.pending == 0
    await writer.flush()  # nothing queued: returns at once
    writer.close()


async def test_a_refused_batch_is_tried_again_then_dropped_and_logged() -> None:
    tries: list[int] = []

    def flaky(events: list[ev.Event]) -> None:
        tries.append(len(events))
        if len(tries) < 3:
            raise OSError("disk I/O error")

    writer = EventWriter(flaky, linger_s=0)
    writer.put(event(1))
    await writer.flush()
    assert tries == [1, 1, 1]  # two failures, then stored

    def down(events: list[ev.Event]) -> None:
        raise OSError("database is gone")

    errors: list[str] = []
    sink = logger.add(lambda m: errors.append(str(m)), level="ERROR")
    try:
        broken = EventWriter(down, linger_s=0)
        broken.put(event(2))
        await asyncio.wait_for(broken.flush(), 5)  # a reader is never stuck behind it
    finally:
        logger.remove(sink)
    assert broken.pending == 0
    assert any("1 run event(s) not stored after 3 tries" in e for e in errors)
    writer.close()
    broken.close()


async def test_emit_waits_when_too_many_events_are_queued(monkeypatch: Any) -> None:
    import dynamic_tools.persistence.run_store as store_module

    monkeypatch.setattr(store_module, "MAX_QUEUED", 3)
    release = threading.Event()

    class Store(RunStore):
        def __init__(self) -> None:
            self.writer = EventWriter(lambda events: release.wait(5), linger_s=0)

    store = Store()
    for seq in range(1, 4):
        await asyncio.wait_for(store.emit(event(seq)), 1)  # queued: returns at once
    waiting = asyncio.ensure_future(store.emit(event(4)))  # past the bound: waits
    await asyncio.sleep(0.2)
    assert not waiting.done()
    release.set()
    await asyncio.wait_for(waiting, 5)
    store.writer.close()
