"""The run store and the journal never disagree silently.

A server starts and compares every run its store calls active with the journal:
- a run the journal finished but whose last events the store missed gets that end;
- a run row with no journal entry (the process died between the two writes) is failed with a
  message saying it never started;
- a run that is unfinished in the journal stays as it is and ``GET /runs/{id}`` names the
  executor holding it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import sqlalchemy as sa

from dynamic_tools.api.app import create_app
from dynamic_tools.persistence.db import run_events, runs
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.integration.e2e.test_durable_runs_over_rest import PARAMS, wait_for
from tests.support.servers import serve


def test_a_restart_reconciles_runs_the_journal_ended_or_never_had(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml",
        seed_examples_from=EXAMPLES,
        durable_runs=True,
    )
    with serve(create_app(settings), port=settings.port) as url:
        finished = httpx.post(f"{url}/workflows/book_flight/runs", json={"params": PARAMS})
        finished_id = finished.json()["run_id"]
        done = wait_for(url, finished_id, "succeeded")
        assert done["executor"]["state"] == "finished"
        paused = httpx.post(f"{url}/workflows/book_with_approval/runs", json={"params": PARAMS})
        paused_id = paused.json()["run_id"]
        waiting = wait_for(url, paused_id, "waiting_input")
        holder = waiting["executor"]
        assert holder["state"] == "executing" and holder["alive"] is True
        assert holder["id"].startswith("sqlite-") and "this process" in holder["detail"]
        assert holder["since"]

    # What a crash at the wrong moment leaves: a finished run whose store row missed its end,
    # and a run row the journal never received.
    engine = sa.create_engine(settings.effective_database_url)
    long_ago = datetime.now(UTC) - timedelta(minutes=10)
    with engine.begin() as conn:
        conn.execute(
            sa.update(runs)
            .where(runs.c.run_id == finished_id)
            .values(status="running", result=None, finished_at=None)
        )
        conn.execute(
            sa.insert(runs).values(
                run_id="lost-run",
                workflow_id="book_flight",
                status="pending",
                params=PARAMS,
                event_count=0,
                created_at=long_ago,
                updated_at=long_ago,
            )
        )
    engine.dispose()

    with serve(create_app(settings), port=settings.port) as url:
        settled = httpx.get(f"{url}/runs/{finished_id}").json()
        assert settled["status"] == "succeeded"
        assert settled["result"]["status"] == "reserved"
        lost = httpx.get(f"{url}/runs/lost-run").json()
        assert lost["status"] == "failed"
        assert lost["error"]["reason"] == "never_started"
        assert "never started" in lost["error"]["message"]
        assert lost["executor"] is None  # the journal has no entry
        still = httpx.get(f"{url}/runs/{paused_id}").json()
        assert still["status"] == "waiting_input"  # unfinished in the journal: left alone
        assert still["executor"]["state"] in ("executing", "queued"), still["executor"]
    engine = sa.create_engine(settings.effective_database_url)
    with engine.connect() as conn:
        ends = conn.execute(
            sa.select(run_events.c.data).where(
                run_events.c.run_id == finished_id, run_events.c.type == "run_succeeded"
            )
        ).all()
    engine.dispose()
    assert [e[0].get("by") for e in ends] == [None, "reconcile"]  # the engine's, then ours
