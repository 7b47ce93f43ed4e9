"""Retry decisions and delays for call nodes (``on_error``).

``retry: N`` means up to N further attempts. Delays: ``delay`` milliseconds before the first
retry, growing by ``backoff`` (constant, linear: delay * n, exponential: delay * 2^(n-1)),
capped by ``max_delay``; ``jitter`` (true = up to 10%, or a fraction) is derived from a seed
(run id + node id + attempt) so a replayed run computes the same delay. A ``Retry-After``
answer header wins when it asks for longer.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from dynamic_tools.engine.call_record import CallFailure
from dynamic_tools.engine.node_parts import OnError

DEFAULT_RETRY_ON = ("transport", "5xx", "429")


def should_retry(on_error: OnError | None, failure: CallFailure, attempt: int) -> bool:
    """Whether to try again after attempt number ``attempt`` (1-based) failed."""
    if on_error is None or attempt > on_error.retry:
        return False
    conditions = set(on_error.retry_on)
    if failure.kind in ("transport", "timeout"):
        return failure.kind in conditions or (
            failure.kind == "timeout" and "transport" in conditions
        )
    if failure.kind == "criteria":
        return "criteria" in conditions
    if failure.kind != "status" or failure.status_code is None:
        return False
    code = failure.status_code
    return (
        str(code) in conditions
        or (code == 429 and "429" in conditions)
        or (500 <= code <= 599 and "5xx" in conditions)
        or (400 <= code <= 499 and code != 429 and "4xx" in conditions)
    )


def retry_delay(on_error: OnError, attempt: int, failure: CallFailure, *, seed: str) -> float:
    """Seconds to wait after attempt ``attempt`` failed, before the next one."""
    base = on_error.delay / 1000.0
    if on_error.backoff == "linear":
        delay = base * attempt
    elif on_error.backoff == "exponential":
        delay = base * (2 ** (attempt - 1))
    else:
        delay = base
    if on_error.max_delay is not None:
        delay = min(delay, on_error.max_delay / 1000.0)
    fraction = 0.1 if on_error.jitter is True else float(on_error.jitter or 0)
    if fraction > 0 and delay > 0:
        digest = hashlib.sha256(f"{seed}:{attempt}".encode()).digest()
        unit = int.from_bytes(digest[:8], "big") / 2**64  # deterministic in [0, 1)
        delay += delay * fraction * unit
    if failure.retry_after_s is not None:
        delay = max(delay, failure.retry_after_s)
    return delay


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), capped at 1 h."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return min(float(text), 3600.0)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), 3600.0)


__all__ = [
    "DEFAULT_RETRY_ON",
    "parse_retry_after",
    "retry_delay",
    "should_retry",
]
