"""Unit tests of the travel demo's controls: counters, injected faults, idempotency keys."""

from __future__ import annotations

import pytest

from dynamic_tools.demo import OPERATIONS, OperationControls, TravelInputError


def test_stats_list_every_operation_with_zeros() -> None:
    controls = OperationControls()
    stats = controls.stats()
    assert list(stats["operations"]) == list(OPERATIONS)
    assert all(
        counters == {"calls": 0, "executed": 0, "replayed": 0, "failed": 0}
        for counters in stats["operations"].values()
    )
    assert stats["faults"] == {}


def test_record_call_counts_calls_and_outcomes() -> None:
    controls = OperationControls()
    for outcome in ("executed", "replayed", "failed", "failed"):
        controls.record_call("create_booking", outcome)  # type: ignore[arg-type]
    assert controls.stats()["operations"]["create_booking"] == {
        "calls": 4,
        "executed": 1,
        "replayed": 1,
        "failed": 2,
    }


def test_a_fault_fails_exactly_n_times_and_its_latency_stays() -> None:
    controls = OperationControls()
    controls.set_fault("process_payment", fail_next=2, status=429, latency_ms=5, retry_after=3)
    first, second = controls.take_fault("process_payment"), controls.take_fault("process_payment")
    assert first is not None and second is not None
    assert (first.status, first.retry_after, first.fail_next, second.fail_next) == (429, 3, 1, 0)
    assert controls.take_fault("process_payment") is None
    assert controls.take_fault("create_booking") is None
    assert controls.latency_ms("process_payment") == 5
    assert controls.clear_faults() == ["process_payment"]
    assert controls.latency_ms("process_payment") == 0


def test_clear_one_fault() -> None:
    controls = OperationControls()
    controls.set_fault("create_booking", fail_next=1)
    controls.set_fault("book_hotel", fail_next=1)
    assert controls.clear_faults("create_booking") == ["create_booking"]
    assert controls.clear_faults("create_booking") == []
    assert list(controls.stats()["faults"]) == ["book_hotel"]


def test_unknown_operation_is_refused_naming_the_field() -> None:
    controls = OperationControls()
    for call in (
        lambda: controls.set_fault("fly_to_the_moon", fail_next=1),
        lambda: controls.clear_faults("fly_to_the_moon"),
    ):
        with pytest.raises(TravelInputError) as caught:
            call()
        assert caught.value.field == "operation"


def test_idempotency_replays_the_same_request_and_refuses_another() -> None:
    controls = OperationControls()
    request = {"flight_id": "FL-AMSBCN-20250601-1", "passenger": "Ada"}
    assert controls.replay("create_booking", "k1", request) is None
    body = {"id": "BK-000001"}
    controls.remember("create_booking", "k1", request, 201, body)
    body["id"] = "changed"
    stored = controls.replay("create_booking", "k1", dict(reversed(list(request.items()))))
    assert stored is not None
    assert (stored.status, stored.body) == (201, {"id": "BK-000001"})
    assert controls.replay("add_to_waitlist", "k1", request) is None
    with pytest.raises(TravelInputError) as caught:
        controls.replay("create_booking", "k1", {**request, "passenger": "Bob"})
    assert caught.value.field == "Idempotency-Key"


def test_reset_forgets_counters_faults_and_keys() -> None:
    controls = OperationControls()
    controls.record_call("search_flights", "executed")
    controls.set_fault("search_flights", fail_next=1)
    controls.remember("cancel_booking", "k", {"booking_id": "BK-000001"}, 200, {})
    controls.reset()
    assert controls.stats()["operations"]["search_flights"]["calls"] == 0
    assert controls.stats()["faults"] == {}
    assert controls.replay("cancel_booking", "k", {"booking_id": "BK-000002"}) is None
