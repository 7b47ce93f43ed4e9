"""Schedules fire once per tick: across replicas racing, restarts, downtime, overlapping runs.

Each test moves a clock and lets every replica make its passes (``Scheduler.fire_due``), as
the loop of each process would at each tick; SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert

from dynamic_tools.access.principals import LOCAL
from dynamic_tools.persistence.db import trigger_ticks, utc_now, write_transaction
from dynamic_tools.persistence.run_history import purge_runs
from dynamic_tools.persistence.trigger_store import trigger_run_id
from tests.support.schedules import (
    T0,
    Clock,
    Replica,
    make_replica,
    runs_by_tick,
    shared_database,
    ticks,
)

DOCUMENT = """\
domain: shop
workflows:
  check_price:
    params:
      sku: {type: string, required: true}
      checked_at: {type: string, required: true}
    graph:
      look: {call: get_price, args: {sku: $sku}, output: price}
    outputs: {price: $price}
    triggers:
      - schedule: every_minute
        cron: "* * * * *"
        params: {sku: ABC-1, checked_at: $trigger.time}
        catch_up: 90s
  approve:
    params:
      asked_at: {type: string}
    graph:
      ask: {type: yield, message: "Approve?", expects: {ok: {type: bool, required: true}}}
    triggers:
      - schedule: skipping
        every: 1m
        overlap: skip
        params: {asked_at: $trigger.time}
        enabled: false
      - schedule: buffering
        every: 1m
        overlap: buffer_one
        params: {asked_at: $trigger.time}
        enabled: false
      - schedule: allowing
        every: 1m
        overlap: allow
        params: {asked_at: $trigger.time}
        enabled: false
"""

Factory = Callable[[], Replica]


@pytest.fixture(params=["sqlite", "postgresql"])
async def replicas(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Factory, Clock]]:
    """Make replicas on one database with one clock; all stopped at the end."""
    workflows = tmp_path / "workflows"
    workflows.mkdir()
    (workflows / "shop.yaml").write_text(DOCUMENT)
    clock = Clock()
    made: list[Replica] = []
    with shared_database(request.param, tmp_path) as (url, schema):

        def make() -> Replica:
            made.append(make_replica(url, schema, workflows, clock))
            return made[-1]

        try:
            yield make, clock
        finally:
            for replica in made:
                await replica.stop()


def _only(workflows: Path, enabled: str) -> None:
    """Turn on one of the approve schedules (the others stay off)."""
    text = DOCUMENT.replace("every_minute", "every_minute_off")
    text = text.replace(
        '        cron: "* * * * *"', '        cron: "* * * * *"\n        enabled: false'
    )
    marker = f"      - schedule: {enabled}\n"
    head, tail = text.split(marker)
    tail = tail.replace("        enabled: false\n", "", 1)
    (workflows / "shop.yaml").write_text(head + marker + tail)


async def _pass(*replicas: Replica) -> None:
    """Each replica makes its pass at the same moment (they race for the same ticks)."""
    await asyncio.gather(*(r.scheduler.fire_due() for r in replicas))


async def _wait_ended(replica: Replica, run_ids: list[str]) -> None:
    for run_id in run_ids:
        run = await replica.store.wait_until(run_id, lambda r: r.terminal, timeout_s=10)
        assert run.status == "succeeded", run.error


async def test_five_minutes_of_ticks_across_a_restart_with_two_replicas_start_one_run_each(
    replicas: tuple[Factory, Clock],
) -> None:
    make, clock = replicas
    a, b = make(), make()
    clock.now = T0 + timedelta(seconds=5)
    await _pass(a, b)  # first sight of the schedule: it counts from now
    for minute in range(1, 6):
        clock.now = T0 + timedelta(minutes=minute, seconds=1)
        if minute == 3:  # replica A restarts across the third tick
            await a.stop()
            a = make()
        await _pass(a, b)
        await _pass(a, b)  # a second pass at the same time finds nothing new
    started = runs_by_tick(b.engine, "check_price")
    assert sorted(started) == [T0 + timedelta(minutes=m) for m in range(1, 6)]
    assert all(len(ids) == 1 for ids in started.values()), started
    await _wait_ended(b, [ids[0] for ids in started.values()])
    one = await b.store.get_run(started[T0 + timedelta(minutes=2)][0])
    assert one.params == {"sku": "ABC-1", "checked_at": "2026-11-27T09:02:00.000+00:00"}
    assert one.trigger == {
        "kind": "schedule",
        "name": "every_minute",
        "time": "2026-11-27T09:02:00.000+00:00",
    }
    assert one.result == {"price": {"sku": "ABC-1", "price": 3}}


async def test_two_replicas_racing_many_times_for_each_tick_start_one_run_per_tick(
    replicas: tuple[Factory, Clock],
) -> None:
    make, clock = replicas
    a, b = make(), make()
    await _pass(a, b)
    for minute in range(1, 4):
        clock.now = T0 + timedelta(minutes=minute)
        await asyncio.gather(*(r.scheduler.fire_due() for r in (a, b) * 4))
    started = runs_by_tick(a.engine, "check_price")
    assert {tick: len(ids) for tick, ids in started.items()} == {
        T0 + timedelta(minutes=m): 1 for m in range(1, 4)
    }
    await _wait_ended(a, [ids[0] for ids in started.values()])


async def test_ticks_missed_while_down_start_within_the_catch_up_window_and_older_are_skipped(
    replicas: tuple[Factory, Clock],
) -> None:
    make, clock = replicas
    first = make()
    await first.scheduler.fire_due()
    clock.now = T0 + timedelta(minutes=1, seconds=2)
    await first.scheduler.fire_due()
    await first.stop()  # everything is down from 09:01 to 09:06:30
    clock.now = T0 + timedelta(minutes=6, seconds=30)
    second = make()
    report = await second.scheduler.fire_due()
    started = runs_by_tick(second.engine, "check_price")
    # catch_up 90s: 09:05 and 09:06 are recent enough; 09:02 to 09:04 are recorded as skipped
    assert sorted(started) == [T0 + timedelta(minutes=m) for m in (1, 5, 6)]
    recorded = {row["tick_at"]: row for row in ticks(second.engine, "check_price")}
    skipped = sorted(t for t, row in recorded.items() if row["outcome"] == "skipped")
    assert [t.astimezone(T0.tzinfo) for t in skipped] == [
        T0 + timedelta(minutes=m) for m in (2, 3, 4)
    ]
    assert all("missed" in recorded[t]["reason"] for t in skipped)
    assert report.skipped == 3 and len(report.started) == 2
    assert sorted(e[3] for e in second.counted) == ["missed"] * 3 + ["started"] * 2
    await second.scheduler.fire_due()  # again at the same moment: nothing new
    assert sum(len(v) for v in runs_by_tick(second.engine, "check_price").values()) == 3


async def test_overlap_skip_records_ticks_while_the_previous_run_waits(
    replicas: tuple[Factory, Clock], tmp_path: Path
) -> None:
    _only(tmp_path / "workflows", "skipping")
    make, clock = replicas
    replica = make()
    await replica.scheduler.fire_due()
    clock.advance(minutes=1)
    first = (await replica.scheduler.fire_due()).started
    assert len(first) == 1
    await replica.store.wait_until(first[0], lambda r: r.status == "waiting_input", timeout_s=10)
    for _ in range(2):
        clock.advance(minutes=1)
        report = await replica.scheduler.fire_due()
        assert report.started == [] and report.skipped == 1
    await replica.runs.resume(first[0], {"ok": True}, principal=LOCAL)
    await replica.store.wait_until(first[0], lambda r: r.terminal, timeout_s=10)
    clock.advance(minutes=1)
    assert len((await replica.scheduler.fire_due()).started) == 1
    outcomes = [row["outcome"] for row in ticks(replica.engine, "approve")]
    assert outcomes == ["started", "skipped", "skipped", "started"]


async def test_overlap_buffer_one_keeps_one_tick_and_starts_it_when_the_run_ends(
    replicas: tuple[Factory, Clock], tmp_path: Path
) -> None:
    _only(tmp_path / "workflows", "buffering")
    make, clock = replicas
    replica = make()
    await replica.scheduler.fire_due()
    clock.advance(minutes=1)
    first = (await replica.scheduler.fire_due()).started[0]
    await replica.store.wait_until(first, lambda r: r.status == "waiting_input", timeout_s=10)
    clock.advance(minutes=1)
    assert (await replica.scheduler.fire_due()).buffered == 1
    clock.advance(minutes=1)
    assert (await replica.scheduler.fire_due()).skipped == 1  # one is already buffered
    await replica.runs.resume(first, {"ok": True}, principal=LOCAL)
    await replica.store.wait_until(first, lambda r: r.terminal, timeout_s=10)
    released = (await replica.scheduler.fire_due()).started
    assert len(released) == 1
    run = await replica.store.get_run(released[0])
    assert run.trigger is not None and run.trigger["time"] == "2026-11-27T09:02:00.000+00:00"
    assert run.params == {"asked_at": "2026-11-27T09:02:00.000+00:00"}
    outcomes = [row["outcome"] for row in ticks(replica.engine, "approve")]
    assert outcomes == ["started", "started", "skipped"]  # the buffered tick, started


async def test_overlap_allow_starts_every_tick_while_earlier_runs_wait(
    replicas: tuple[Factory, Clock], tmp_path: Path
) -> None:
    _only(tmp_path / "workflows", "allowing")
    make, clock = replicas
    replica = make()
    await replica.scheduler.fire_due()
    started = []
    for _ in range(3):
        clock.advance(minutes=1)
        started += (await replica.scheduler.fire_due()).started
    assert len(started) == 3
    for run_id in started:
        run = await replica.store.wait_until(
            run_id, lambda r: r.status == "waiting_input", timeout_s=10
        )
        assert run.status == "waiting_input"


async def test_a_paused_schedule_does_not_fire_and_resumes_from_the_next_tick(
    replicas: tuple[Factory, Clock],
) -> None:
    make, clock = replicas
    replica = make()
    scheduler = replica.scheduler
    await scheduler.fire_due()
    await scheduler.set_paused("check_price", "every_minute", True, principal=LOCAL)
    described = (await scheduler.describe("check_price"))[0]
    assert described["paused"] and described["next_fire_times"] == []
    clock.advance(minutes=3)
    assert (await scheduler.fire_due()).started == []
    await scheduler.set_paused("check_price", "every_minute", False, principal=LOCAL)
    assert (await scheduler.fire_due()).started == []  # what it missed paused is not caught up
    described = (await scheduler.describe("check_price"))[0]
    assert described["next_fire_times"][:2] == [
        (T0 + timedelta(minutes=4)).isoformat(timespec="milliseconds"),
        (T0 + timedelta(minutes=5)).isoformat(timespec="milliseconds"),
    ]
    assert len(described["next_fire_times"]) == 5
    clock.advance(minutes=1, seconds=1)
    assert len((await scheduler.fire_due()).started) == 1


async def test_a_claim_whose_process_died_is_started_once_and_a_purged_run_never_again(
    replicas: tuple[Factory, Clock],
) -> None:
    make, clock = replicas
    replica = make()
    await replica.scheduler.fire_due()
    clock.advance(minutes=1)
    first = (await replica.scheduler.fire_due()).started
    await _wait_ended(replica, first)
    # a process claimed 09:02 and died before starting its run; 09:01's run was purged since
    tick = T0 + timedelta(minutes=2)
    run_id = trigger_run_id("check_price", "schedule", "every_minute", tick.isoformat())
    long_ago = utc_now() - timedelta(minutes=5)
    with write_transaction(replica.engine) as conn:
        conn.execute(
            insert(trigger_ticks).values(
                workflow_id="check_price",
                trigger_name="every_minute",
                tick_at=tick,
                outcome="claimed",
                run_id=run_id,
                recorded_at=long_ago,
            )
        )
    await purge_runs(replica.engine, workflow_id="check_price", older_than_days=None)
    clock.now = tick + timedelta(seconds=5)
    report = await replica.scheduler.fire_due()
    assert report.started == [run_id]  # repaired; 09:01 (purged) is not started again
    assert (await replica.scheduler.fire_due()).started == []
    await _wait_ended(replica, [run_id])
    outcomes = {
        row["tick_at"].minute: row["outcome"] for row in ticks(replica.engine, "check_price")
    }
    assert outcomes == {1: "started", 2: "started"}
