"""Durations, ISO dates, the fixed function set, and errors raised while evaluating."""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Any

import pytest

from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.expressions import evaluate, parse_expression
from dynamic_tools.engine.references import Reference, resolve_reference

SCOPE: dict[str, Any] = {
    "start_date": "2026-02-26",
    "num_days": 3,
    "availability": {"seats_available": 2},
    "code": "SPRING10",
    "items": [3, 1, 2],
    "names": ["ada", "grace"],
    "n": 10,
    "flag": True,
    "flight_results": [{"id": "FL-1", "price": 120}, {"id": "FL-2", "price": 99}],
    "text": "Hello",
    "when": "2026-02-26T10:00:00Z",
}


def run(text: str, **overrides: Any) -> Any:
    scope = {**SCOPE, **overrides}
    resolve = partial(resolve_reference, lookup=scope.__getitem__)
    return evaluate(parse_expression(text), resolve)


def fails(text: str, **overrides: Any) -> ExpressionError:
    with pytest.raises(ExpressionError) as caught:
        run(text, **overrides)
    return caught.value


# --- durations and dates ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7 days", timedelta(days=7)),
        ("1 day", timedelta(days=1)),
        ("90 seconds", timedelta(seconds=90)),
        ("1 second", timedelta(seconds=1)),
        ("5 minutes + 1 minute", timedelta(minutes=6)),
        ("2 hours", timedelta(hours=2)),
        ("1 hour", timedelta(hours=1)),
        ("2 weeks", timedelta(weeks=2)),
        ("1 week", timedelta(weeks=1)),
        ("1.5 days", timedelta(hours=36)),
        ("$num_days days", timedelta(days=3)),
        ("($num_days + 1) days", timedelta(days=4)),
        ("len($items) hours", timedelta(hours=3)),
        ("-2 days", timedelta(days=-2)),
        ("2 * 3 days", timedelta(days=6)),
        ("3 days * 2", timedelta(days=6)),
        ("1 day - 1 hour", timedelta(hours=23)),
        ("1 day / 2", timedelta(hours=12)),
        ("abs(-1 day)", timedelta(days=1)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$start_date + 1 day", "2026-02-27"),
        ("$start_date + 3 days", "2026-03-01"),
        ("$start_date - 1 week", "2026-02-19"),
        ("2 days + $start_date", "2026-02-28"),
        ("'2024-02-28' + 1 day", "2024-02-29"),
        ("$when + 90 minutes", "2026-02-26T11:30:00Z"),
        ("'2026-02-26T10:00' + 1 hour", "2026-02-26T11:00"),
        ("'2026-02-26 23:30:00' + 1 hour", "2026-02-27 00:30:00"),
        ("'2026-02-26T10:00:00+01:00' + 1 day", "2026-02-27T10:00:00+01:00"),
        ("'2026-02-26T10:00:00.250000' + 1 second", "2026-02-26T10:00:01.250000"),
        ("'2026-03-01' - '2026-02-26'", timedelta(days=3)),
        ("'2026-03-01' - '2026-02-26' > 2 days", True),
        ("('2026-03-01' - $start_date) / 1 day", 3.0),
        ("$start_date < '2026-03-01'", True),
        ("'2026-02-26' <= '2026-02-26'", True),
        ("'2026-02-26T10:00:00+01:00' < '2026-02-26T09:30:00Z'", True),
        ("$start_date == '2026-02-26'", True),
        ("date($when)", "2026-02-26"),
        ("date($start_date)", "2026-02-26"),
        ("date($when) == $start_date", True),
    ],
)
def test_dates(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("$start_date + 3 hours", "whole days"),
        ("$start_date + 1", "write a duration such as '1 days'"),
        ("'tomorrow' + 1 day", "not an ISO date"),
        ("'2026-02-30' + 1 day", "not a valid date"),
        ("'9999-12-31' + 1 day", "outside the years"),
        ("'2026-02-26T10:00:00Z' - '2026-02-26T10:00:00'", "time zone"),
        ("'2026-02-26T10:00:00Z' < '2026-02-26T10:00:00'", "time zone"),
        ("'x' days", "a duration needs a number before 'days'"),
        ("true days", "boolean"),
        ("999999999999 weeks", "too large"),
    ],
)
def test_date_errors(text: str, fragment: str) -> None:
    assert fragment in fails(text).message


# --- functions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("range(0, 3)", [0, 1, 2]),
        ("range(1, 10, 4)", [1, 5, 9]),
        ("range(5, 0, -2)", [5, 3, 1]),
        ("range(3, 3)", []),
        ("range(0, $n / 5)", [0, 1]),
        ("range('2026-02-26', '2026-03-04', 2 days)", ["2026-02-26", "2026-02-28", "2026-03-02"]),
        ("range('2026-03-01', '2026-02-27', -1 day)", ["2026-03-01", "2026-02-28"]),
        ("range('2026-03-01', '2026-02-27')", []),
        (
            "range('2026-02-26T10:00Z', '2026-02-26T12:00Z', 45 minutes)",
            ["2026-02-26T10:00Z", "2026-02-26T10:45Z", "2026-02-26T11:30Z"],
        ),
        ("len($items)", 3),
        ("len('hello')", 5),
        ("len($availability)", 1),
        ("len([])", 0),
        ("min($items)", 1),
        ("max($items)", 3),
        ("min(4, 2, 8)", 2),
        ("max('b', 'a')", "b"),
        ("max(['2026-01-02', '2025-12-31'])", "2026-01-02"),
        ("min(1 day, 3 hours)", timedelta(hours=3)),
        ("sum($items)", 6),
        ("sum([])", 0),
        ("sum([0.5, 1])", 1.5),
        ("abs(-3)", 3),
        ("abs(2.5)", 2.5),
        ("round(2.567, 2)", 2.57),
        ("round(2.4)", 2),
        ("round(2.5)", 2),
        ("round(3.5)", 4),
        ("lower('AbC')", "abc"),
        ("upper($text)", "HELLO"),
        ("contains($names, 'ada')", True),
        ("contains('abc', 'z')", False),
        ("contains($availability, 'seats_available')", True),
        ("startswith($code, 'SPR')", True),
        ("endswith($code, '11')", False),
        ("int('42')", 42),
        ("int(' -7 ')", -7),
        ("int(3.9)", 3),
        ("int(true)", 1),
        ("float('2.5')", 2.5),
        ("float(3)", 3.0),
        ("str(5)", "5"),
        ("str(null)", "null"),
        ("str(true)", "true"),
        ("str([1, 2])", "[1,2]"),
        ("str('x')", "x"),
        ("date('2026-02-26T23:59:59+05:00')", "2026-02-26"),
        ("len(range(0, 10000))", 10000),
    ],
)
def test_functions(text: str, expected: Any) -> None:
    result = run(text)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("range(0, 1, 0)", "step must not be zero"),
        ("range(0.5, 3)", "whole number"),
        ("range('a', 3)", "must be a number or an ISO date"),
        ("range($start_date, 3)", "needs an ISO date stop"),
        ("range($start_date, $when)", "needs an ISO date stop"),
        ("range($start_date, '2026-03-01', 1)", "duration step"),
        ("range($start_date, '2026-03-01', 0 days)", "step must not be zero"),
        ("range($start_date, '2026-03-01', 12 hours)", "whole days"),
        ("range(0, 10001)", "10,001 items; the limit is 10,000"),
        ("range(0, 1000000000000)", "the limit is 10,000"),
        ("range('2000-01-01', '2100-01-01')", "the limit is 10,000"),
        ("len(5)", "len() needs a list, string or object"),
        ("min([])", "empty list"),
        ("min(5)", "needs a list"),
        ("max(1, 'a')", "cannot compare a string ('a') with a number (1) in max()"),
        ("sum([1, 'a'])", "list of numbers"),
        ("sum(3)", "list of numbers"),
        ("abs('x')", "abs() needs a number"),
        ("round('x')", "round() needs a number"),
        ("round(1.5, 0.5)", "digits must be a whole number"),
        ("lower(1)", "lower() needs a string"),
        ("startswith('a', 1)", "startswith() needs a string"),
        ("contains(1, 1)", "needs a list, string or object"),
        ("contains('abc', 1)", "cannot look for a number (1)"),
        ("int('3.5')", "int() cannot read"),
        ("int([])", "int() cannot read"),
        ("float('nan')", "float() cannot read"),
        ("float('1e999')", "float() cannot read"),
        ("date('soon')", "date() needs an ISO date"),
        ("date(20260226)", "date() needs an ISO date"),
    ],
)
def test_function_errors(text: str, fragment: str) -> None:
    error = fails(text)
    assert fragment in error.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("len()", "len(value) takes 1 argument, got 0"),
        ("len(1, 2)", "len(value) takes 1 argument, got 2"),
        ("range(1)", "takes 2 to 3 arguments, got 1"),
        ("min()", "takes at least 1 argument, got 0"),
        ("contains('a')", "takes 2 arguments, got 1"),
        ("now()", "runs must be deterministic"),
        ("today()", "runs must be deterministic"),
        ("random()", "runs must be deterministic"),
        ("eval('1')", "unknown name 'eval'"),
        ("__import__('os')", "unknown name '__import__'"),
        ("len", "expected '(' after the function name 'len'"),
    ],
)
def test_calls_are_checked_when_parsing(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text)
    assert fragment in caught.value.message
    assert caught.value.position == 0 or text == "len"


# --- type errors at evaluation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("1 < 'a'", 2, "cannot compare a number (1) with a string ('a') using '<'"),
        ("$n >= null", 3, "a number (10) with null using '>='"),
        ("$flag > 0", 6, "a boolean (true) with a number (0)"),
        ("[1] < [2]", 4, "a list of 1 with a list of 1"),
        ("1 + 'a'", 2, "cannot apply '+' to a number (1) and a string ('a')"),
        ("true + 1", 5, "a boolean (true) and a number (1)"),
        ("'a' - 'b'", 4, "cannot apply '-'"),
        ("'a' * 3", 4, "cannot apply '*'"),
        ("1 / 0", 2, "division by zero"),
        ("$n / (2 - 2)", 3, "division by zero"),
        ("1 day / 0", 6, "division by zero"),
        ("5 % 0", 2, "modulo by zero"),
        ("1 % 'a'", 2, "cannot apply '%'"),
        ("-'a'", 0, "cannot negate a string"),
        ("1 in 5", 2, "'in' needs a list, string or object, not a number (5)"),
        ("1 in 'abc'", 2, "cannot look for a number (1) in a string"),
        ("1e308 * 10", 6, "too large"),
    ],
)
def test_type_errors_name_both_types_and_the_operator(
    text: str, position: int, fragment: str
) -> None:
    error = fails(text)
    assert error.position == position
    assert fragment in error.message
    assert f"at position {position}" in error.message


def test_evaluation_errors_name_the_node() -> None:
    with pytest.raises(ExpressionError) as caught:
        evaluate(parse_expression("1 / 0"), lambda ref: None, node_id="decide")
    assert caught.value.node_id == "decide"
    assert caught.value.to_dict()["context"]["node_id"] == "decide"


def test_unresolved_references_name_the_node() -> None:
    resolve = partial(resolve_reference, lookup=SCOPE.__getitem__)
    with pytest.raises(UnresolvedReferenceError) as caught:
        evaluate(parse_expression("$flight_results.5.id == 'x'"), resolve, node_id="decide")
    assert caught.value.node_id == "decide"
    assert caught.value.reference == "$flight_results.5.id"
    assert "index 5 out of range for a list of 2" in caught.value.message


def test_a_resolver_raising_key_error_becomes_unresolved_reference() -> None:
    def resolve(ref: Reference) -> Any:
        raise KeyError(ref.name)

    with pytest.raises(UnresolvedReferenceError) as caught:
        evaluate(parse_expression("$ghost > 1"), resolve, node_id="n")
    assert caught.value.reference == "$ghost"
    assert caught.value.node_id == "n"
