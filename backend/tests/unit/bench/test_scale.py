"""The scale run's count at the tool: an expected call never seen is lost, a repeat duplicated."""

from __future__ import annotations

from collections import Counter

from bench.scale import calls_lost_and_duplicated


def test_every_expected_call_seen_once_is_neither_lost_nor_duplicated() -> None:
    calls = Counter({(n, step): 1 for n in range(3) for step in (1, 2, 3)})
    assert calls_lost_and_duplicated(calls, 3) == (0, 0)


def test_a_missing_call_is_lost_and_a_repeated_or_unexpected_one_duplicated() -> None:
    calls = Counter({(n, step): 1 for n in range(3) for step in (1, 2, 3)})
    del calls[(1, 3)]
    calls[(2, 1)] = 3  # two calls too many
    calls[(7, 1)] = 1  # a run that was never started
    assert calls_lost_and_duplicated(calls, 3) == (1, 3)
