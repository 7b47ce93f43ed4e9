"""Run events: one class per type, a stable dictionary form, decoding only by class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dynamic_tools.engine import events as ev

SRC = Path(__file__).resolve().parents[3] / "src" / "dynamic_tools"

SAMPLES: list[ev.Event] = [
    ev.RunCreated(workflow_id="w"),
    ev.RunStarted(workflow_id="w"),
    ev.RunSucceeded(result={"ok": 1}),
    ev.RunFailed(error={"message": "x", "node_id": "n"}, by="reconcile"),
    ev.RunCancelled(error={"message": "the run was cancelled"}),
    ev.NodeStarted(node_id="n", kind="call", tool="search"),
    ev.NodeStarted(node_id="b", kind="branch"),
    ev.NodeSkipped(node_id="n", reason="not reached"),
    ev.NodeNotRun(node_id="n", reason="the run failed before it"),
    ev.NodeInput(node_id="n", input={"flight_id": "FL-1"}),
    ev.NodeSucceeded(node_id="n", output=[1], input={"a": 1}),
    ev.NodeFailed(node_id="n", error="HTTP 404", input=None, detail={"tool": "t"}),
    ev.NodeFailed(node_id="n", error="boom", fallback="recover"),
    ev.AttemptFailed(node_id="n", tool="t", attempt=1, max_attempts=3, error="e", status_code=503),
    ev.RetryScheduled(node_id="n", tool="t", attempt=2, max_attempts=3, delay_s=0.5),
    ev.WaitingInput(node_id="ask", message="pick", expects={"id": {"type": "string"}}),
    ev.Resumed(node_id="ask", values={"id": "x"}),
    ev.Compensated(name="saga:book", call="cancel", ok=True, status_code=204),
    ev.Compensated(name="undo:0", call="cancel", ok=False, error="refused"),
]


def test_every_type_has_one_class_and_a_sample() -> None:
    assert {type(e) for e in SAMPLES} == set(ev.EVENT_TYPES.values())
    assert len(ev.EVENT_TYPES) == len({cls.TYPE for cls in ev.EVENT_TYPES.values()})


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.TYPE)
def test_dict_form_round_trips(event: ev.Event) -> None:
    stamped = event.stamped(run_id="r1", seq=4, at="2026-01-01T00:00:00.000+00:00")
    data = stamped.to_dict()
    assert data["type"] == event.TYPE and data["run_id"] == "r1" and data["seq"] == 4
    assert ev.event_from_dict(data) == stamped


def test_optional_fields_are_left_out_while_unset() -> None:
    assert "tool" not in ev.NodeStarted(node_id="b", kind="branch").to_dict()
    failed = ev.NodeFailed(node_id="n", error="x").to_dict()
    assert "fallback" not in failed and "detail" not in failed and failed["input"] is None
    assert "by" not in ev.RunSucceeded(result=1).to_dict()
    assert "seq" not in ev.RunCreated(workflow_id="w").to_dict()


def test_unknown_types_and_ends_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown run event type 'nope'"):
        ev.event_from_dict({"type": "nope"})
    with pytest.raises(ValueError, match="cannot end as 'paused'"):
        ev.run_ended("paused")
    assert isinstance(ev.run_ended("failed", error={}), ev.RunFailed)


def test_unknown_fields_from_another_writer_are_dropped() -> None:
    event = ev.event_from_dict({"type": "resumed", "node_id": "a", "values": {}, "extra": 1})
    assert event == ev.Resumed(node_id="a", values={})


def test_sources_and_node_ends() -> None:
    assert ev.NodeSkipped(node_id="x").source == "x"
    assert ev.Compensated(name="saga:book").target == "book"
    assert ev.Compensated(name="undo:2").target == "undo"
    assert ev.RunStarted().source == ""
    ends = {
        cls.TYPE: cls.ENDS_NODE for cls in ev.EVENT_TYPES.values() if issubclass(cls, ev.NodeEvent)
    }
    assert {k: v for k, v in ends.items() if v} == {
        "node_skipped": "skipped",
        "node_not_run": "not_run",
        "node_succeeded": "succeeded",
        "node_failed": "failed",
    }


def test_no_module_decodes_an_event_by_its_type_name() -> None:
    """Event type names appear as string literals only in engine/events.py."""
    names = {cls.TYPE for cls in ev.EVENT_TYPES.values()} - {"waiting_input"}  # also a status
    alternatives = "|".join(sorted(names))
    literal = re.compile(rf"""["']({alternatives})["']""")
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        if path.name != "events.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert offenders == []
