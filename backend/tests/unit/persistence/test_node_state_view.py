"""The run view keeps each node as the engine's NodeState, stored as the JSON older code wrote.

docs/architecture.md "An outcome's shapes": the node's record from the engine to the UI is one
type; these pin that its stored JSON and its events' JSON did not change with it.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.state import NodeState
from dynamic_tools.persistence.run_view import (
    RunRecord,
    apply_event,
    node_from_row,
    stored_node,
)

AT = datetime(2026, 11, 27, 12, 0, 0, tzinfo=UTC)
LATER = datetime(2026, 11, 27, 12, 0, 1, 500_000, tzinfo=UTC)
ROW = {"status": "running", "waiting": None, "started_at": AT}


def test_a_call_node_is_stored_as_the_dict_the_view_wrote_before() -> None:
    _, started = apply_event(ROW, ev.NodeStarted(node_id="search", kind="call", tool="t"), AT)
    _, done = apply_event(
        ROW, ev.NodeSucceeded(node_id="search", output=[{"id": 1}], input={"q": 1}), LATER, started
    )
    assert isinstance(done, NodeState)
    assert stored_node(done) == {
        "status": "succeeded",
        "kind": "call",
        "tool": "t",
        "input": {"q": 1},
        "output": [{"id": 1}],
        "error": None,
        "attempts": 1,
        "started_at": "2026-11-27T12:00:00.000+00:00",
        "ended_at": "2026-11-27T12:00:01.500+00:00",
        "detail": {},
    }
    assert started is not None and started.status == "running"  # the stored one is not changed


def test_rows_written_by_older_code_read_as_node_states() -> None:
    old = {"status": "waiting_input", "attempts": 0, "detail": {"message": "pick", "expects": {}}}
    state = node_from_row(old)
    assert state.status == "waiting_input" and state.detail["message"] == "pick"
    assert node_from_row({"status": "pending", "attempts": 0}) == NodeState()
    assert node_from_row(None) == NodeState()


def test_the_shown_node_has_its_duration_and_a_node_never_reached_is_not_run() -> None:
    now = AT
    record = RunRecord(
        run_id="r",
        workflow_id="w",
        document_version=None,
        status="failed",
        params={},
        result=None,
        error=None,
        nodes={
            "a": NodeState(
                status="succeeded",
                started_at="2026-11-27T12:00:00.000+00:00",
                ended_at="2026-11-27T12:00:01.500+00:00",
            ),
            "b": NodeState(),
        },
        waiting={},
        event_count=3,
        created_at=now,
        updated_at=now,
        started_at=now,
        finished_at=now,
    )
    shown = record.shown_nodes()
    assert shown["a"].duration_ms == 1500.0 and shown["b"].status == "not_run"
    assert record.nodes["b"].status == "pending"  # the stored state is as it was
    assert "duration_ms" not in stored_node(shown["a"])  # shown, never stored


def test_events_keep_their_json_through_the_journal_pair() -> None:
    started = ev.NodeStarted(run_id="r", seq=3, at="t", node_id="n", kind="call")
    assert started.to_dict() == {
        "run_id": "r",
        "seq": 3,
        "type": "node_started",
        "at": "t",
        "node_id": "n",
        "kind": "call",
    }  # ``tool`` left out while None
    failed = ev.NodeFailed(run_id="r", at="t", node_id="n", error="boom", fallback="f")
    data = failed.to_dict()
    assert "seq" not in data and "detail" not in data and data["fallback"] == "f"
    assert ev.event_from_dict(data) == failed
    lenient = ev.event_from_dict({**data, "seq": "x", "at": None, "new_field": 1})
    assert lenient == dataclasses.replace(failed, at="")  # a bad seq dropped, no time:
    assert ev.omitted_while_none(ev.NodeFailed) == {"seq", "fallback", "detail"}
