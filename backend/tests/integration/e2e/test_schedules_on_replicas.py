"""A schedule on two real replicas on PostgreSQL: one run per tick, across a kill -9 and a restart.

Replicas A and B (durable runs) read the same document: a schedule every second. Both run the
scheduler; each tick is claimed once in the database. A is killed with SIGKILL mid-way and
started again on another port; B fires meanwhile, and A's return does not fire a tick twice.
The runs wait at a yield (overlap: allow), so nothing but the schedule decides how many there
are. PostgreSQL is ``TEST_DATABASE_URL``; it fails when it does not answer (``DT_NO_POSTGRES=1``
skips it on a machine without one).
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.support.postgres import fresh_database
from tests.support.processes import server, until
from tests.support.servers import free_port

DOCUMENT = """\
domain: pulse
workflows:
  heartbeat:
    params:
      at: {type: string, required: true}
    graph:
      wait: {type: yield, message: "Seen?", expects: {ok: {type: bool}}}
    triggers:
      - schedule: every_second
        every: 1s
        overlap: allow
        catch_up: 30s
        params: {at: $trigger.time}
"""


@pytest.fixture
def database_url() -> Iterator[str]:
    with fresh_database("dt_sched") as url:
        yield url


def replica_env(tmp_path: Path, name: str, database_url: str) -> dict[str, str]:
    registry = tmp_path / name / "registry"
    (registry / "workflows").mkdir(parents=True, exist_ok=True)
    (registry / "workflows" / "pulse.yaml").write_text(DOCUMENT)
    return {
        "DATA_DIR": str(tmp_path / name / "data"),
        "REGISTRY_CONFIG_PATH": str(registry / "config.yaml"),
        "DATABASE_URL": database_url,
        "DURABLE_RUNS": "true",
        "EXECUTOR_ID": f"replica-{name}",
        "FAILOVER_CHECK_S": "0",
        "SCHEDULER_POLL_S": "0.5",
        "ENABLE_DEMO_API": "false",
    }


def runs_by_tick(database_url: str) -> dict[datetime, int]:
    engine = sa.create_engine(sa.make_url(database_url).set(drivername="postgresql+psycopg"))
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT trigger_time, count(*) FROM runs WHERE trigger_name = 'every_second' "
                    "GROUP BY trigger_time"
                )
            ).all()
    finally:
        engine.dispose()
    return {tick: count for tick, count in rows}


@pytest.mark.timeout(240)
def test_a_schedule_fires_once_per_tick_on_two_replicas_across_a_kill_and_a_restart(
    tmp_path: Path, database_url: str
) -> None:
    log = tmp_path / "servers.log"
    env_a = replica_env(tmp_path, "a", database_url)
    env_b = replica_env(tmp_path, "b", database_url)
    with server(free_port(), env_a, log) as a, server(free_port(), env_b, log):
        until(lambda: len(runs_by_tick(database_url)) >= 5, timeout=60)
        a.send_signal(signal.SIGKILL)
        a.wait(timeout=10)
        seen = len(runs_by_tick(database_url))
        until(lambda: len(runs_by_tick(database_url)) >= seen + 4, timeout=60)
        with server(free_port(), env_a, log):  # A again, on another port
            seen = len(runs_by_tick(database_url))
            until(lambda: len(runs_by_tick(database_url)) >= seen + 4, timeout=60)
    found = runs_by_tick(database_url)
    assert all(count == 1 for count in found.values()), {t: c for t, c in found.items() if c > 1}
    ticks = sorted(found)
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(ticks)]
    assert all(gap == 1.0 for gap in gaps), gaps  # no tick lost while A was down or back
    assert len(ticks) >= 13
