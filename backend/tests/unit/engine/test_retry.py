"""Retry decisions and delays of call nodes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dynamic_tools.engine.call_record import CallFailure
from dynamic_tools.engine.models import OnError
from dynamic_tools.engine.retry import parse_retry_after, retry_delay, should_retry

STATUS_503 = CallFailure("status", "HTTP 503", status_code=503)


@pytest.mark.parametrize(
    ("retry_on", "failure", "retried"),
    [
        (["transport", "5xx", "429"], CallFailure("transport", "reset"), True),
        (["transport"], CallFailure("timeout", "slow"), True),  # a timeout is a transport failure
        (["timeout"], CallFailure("transport", "reset"), False),
        (["5xx"], STATUS_503, True),
        (["503"], STATUS_503, True),
        (["502"], STATUS_503, False),
        (["429"], CallFailure("status", "HTTP 429", status_code=429), True),
        (["4xx"], CallFailure("status", "HTTP 429", status_code=429), False),  # 429 is its own
        (["4xx"], CallFailure("status", "HTTP 409", status_code=409), True),
        (["transport", "5xx", "4xx"], CallFailure("refused", "no"), False),  # never retried
        (["transport", "5xx", "4xx"], CallFailure("error", "bug"), False),
        (["transport", "5xx", "4xx"], CallFailure("success_check", "no"), False),
    ],
)
def test_what_is_retried(retry_on: list[str], failure: CallFailure, retried: bool) -> None:
    assert should_retry(OnError(retry=2, retry_on=retry_on), failure, 1) is retried


def test_no_policy_or_no_attempts_left_means_no_retry() -> None:
    assert not should_retry(None, STATUS_503, 1)
    policy = OnError(retry=2)
    assert should_retry(policy, STATUS_503, 2) and not should_retry(policy, STATUS_503, 3)


@pytest.mark.parametrize(
    ("backoff", "delays"),
    [
        ("constant", [0.1, 0.1, 0.1]),
        ("linear", [0.1, 0.2, 0.3]),
        ("exponential", [0.1, 0.2, 0.4]),
    ],
)
def test_backoff_shapes(backoff: str, delays: list[float]) -> None:
    policy = OnError(retry=3, delay=100, backoff=backoff)  # type: ignore[arg-type]
    got = [retry_delay(policy, n, STATUS_503, seed="r:n") for n in (1, 2, 3)]
    assert got == pytest.approx(delays)


def test_max_delay_caps_and_retry_after_wins_when_longer() -> None:
    policy = OnError(retry=5, delay=1000, backoff="exponential", max_delay=3000)
    assert retry_delay(policy, 4, STATUS_503, seed="s") == 3.0
    asked = CallFailure("status", "HTTP 503", status_code=503, retry_after_s=9.0)
    assert retry_delay(policy, 1, asked, seed="s") == 9.0


def test_jitter_is_deterministic_per_seed_and_bounded() -> None:
    policy = OnError(retry=3, delay=1000, jitter=0.5)
    first = retry_delay(policy, 1, STATUS_503, seed="run-1:book")
    assert first == retry_delay(policy, 1, STATUS_503, seed="run-1:book")  # same on replay
    assert 1.0 <= first < 1.5
    others = {retry_delay(policy, 1, STATUS_503, seed=f"run-{i}:book") for i in range(20)}
    assert len(others) > 1


def test_retry_after_seconds_dates_and_garbage() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("999999") == 3600.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 31 Dec 2025 00:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
