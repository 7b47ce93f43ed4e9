"""The fixed set of functions an expression may call (see ``docs/expressions.md``).

The set is closed on purpose: no function reads the clock, randomness or the outside world,
so evaluating an expression twice over the same values gives the same result. That is what
lets a durable run replay its decisions. The parser checks names and argument counts; the
functions check the values and raise ``OperandError`` for the evaluator to report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dynamic_tools.engine.expression_values import (
    ONE_DAY,
    OperandError,
    compare,
    contains,
    is_number,
    parse_iso,
)
from dynamic_tools.engine.references import describe, to_text
from dynamic_tools.safe_parsing import TooDeep

MAX_RANGE_ITEMS = 10_000
"""The most items ``range()`` may produce."""

NONDETERMINISTIC = frozenset({"now", "today", "utcnow", "random", "uuid"})
"""Names people reach for that are refused because a run must be deterministic."""

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Function:
    """A callable of the language: its implementation and how many arguments it takes."""

    implementation: Callable[..., Any]
    signature: str
    min_args: int
    max_args: int | None

    def arity_problem(self, count: int) -> str | None:
        """Why ``count`` arguments do not fit, or None when they do."""
        if self.min_args <= count and (self.max_args is None or count <= self.max_args):
            return None
        if self.max_args is None:
            wanted = f"at least {self.min_args}"
        elif self.min_args == self.max_args:
            wanted = str(self.min_args)
        else:
            wanted = f"{self.min_args} to {self.max_args}"
        plural = "" if wanted in ("1", "at least 1") else "s"
        return f"{self.signature} takes {wanted} argument{plural}, got {count}"


def _range(start: Any, stop: Any, step: Any = None) -> list[Any]:
    if isinstance(start, str):
        return _date_range(start, stop, step)
    first = _whole(start, "start")
    last = _whole(stop, "stop")
    by = 1 if step is None else _whole(step, "step")
    if by == 0:
        raise OperandError("range() step must not be zero")
    numbers = range(first, last, by)
    _check_count(len(numbers))
    return list(numbers)


def _date_range(start: str, stop: Any, step: Any) -> list[str]:
    first = parse_iso(start, strict=True)
    if first is None:
        raise OperandError(f"range() start must be a number or an ISO date, not {describe(start)}")
    last = parse_iso(stop, strict=True)
    if last is None or last.is_datetime != first.is_datetime:
        kind = "datetime" if first.is_datetime else "date"
        raise OperandError(
            f"range() from an ISO {kind} needs an ISO {kind} stop, not {describe(stop)}"
        )
    by = ONE_DAY if step is None else step
    if not isinstance(by, timedelta):
        raise OperandError(
            f"range() over dates takes a duration step such as 2 days, not {describe(step)}"
        )
    if not by:
        raise OperandError("range() step must not be zero")
    if not first.is_datetime and by % ONE_DAY:
        raise OperandError(f"range() over dates needs a step of whole days, not {by}")
    count = max(0, -(first.minus(last) // by))
    _check_count(count)
    return [first.write(first.moment + by * index) for index in range(count)]


def _whole(value: Any, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise OperandError(
        f"range() {what} must be a whole number or an ISO date, not {describe(value)}"
    )


def _check_count(count: int) -> None:
    if count > MAX_RANGE_ITEMS:
        raise OperandError(f"range() would make {count:,} items; the limit is {MAX_RANGE_ITEMS:,}")


def _len(value: Any) -> int:
    if isinstance(value, str | list | tuple | dict):
        return len(value)
    raise OperandError(f"len() needs a list, string or object, not {describe(value)}")


def _extreme(name: str, args: Sequence[Any], sign: int) -> Any:
    if len(args) == 1:
        if not isinstance(args[0], list | tuple):
            raise OperandError(f"{name}() of one argument needs a list, not {describe(args[0])}")
        args = args[0]
    if not args:
        raise OperandError(f"{name}() of an empty list")
    best = args[0]
    for value in args[1:]:
        if compare(value, best, f"in {name}()") == sign:
            best = value
    return best


def _min(*args: Any) -> Any:
    return _extreme("min", args, -1)


def _max(*args: Any) -> Any:
    return _extreme("max", args, 1)


def _sum(values: Any) -> Any:
    if not isinstance(values, list | tuple):
        raise OperandError(f"sum() needs a list of numbers, not {describe(values)}")
    for value in values:
        if not is_number(value):
            raise OperandError(f"sum() needs a list of numbers, but it holds {describe(value)}")
    total = sum(values)
    if isinstance(total, float) and not math.isfinite(total):
        raise OperandError("the result is too large to represent")
    return total


def _abs(value: Any) -> Any:
    if is_number(value) or isinstance(value, timedelta):
        return abs(value)
    raise OperandError(f"abs() needs a number or a duration, not {describe(value)}")


def _round(value: Any, digits: Any = None) -> Any:
    if not is_number(value):
        raise OperandError(f"round() needs a number, not {describe(value)}")
    if digits is None:
        return round(value)
    if not isinstance(digits, int) or isinstance(digits, bool):
        raise OperandError(f"round() digits must be a whole number, not {describe(digits)}")
    return round(value, digits)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise OperandError(f"{name}() needs a string, not {describe(value)}")
    return value


def _lower(value: Any) -> str:
    return _text("lower", value).lower()


def _upper(value: Any) -> str:
    return _text("upper", value).upper()


def _contains(haystack: Any, needle: Any) -> bool:
    return contains(haystack, needle)


def _startswith(value: Any, prefix: Any) -> bool:
    return _text("startswith", value).startswith(_text("startswith", prefix))


def _endswith(value: Any, suffix: Any) -> bool:
    return _text("endswith", value).endswith(_text("endswith", suffix))


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if is_number(value):
        if not math.isfinite(value):
            raise OperandError(f"int() cannot convert {describe(value)}")
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    raise OperandError(f"int() cannot read {describe(value)} as a whole number")


def _float(value: Any) -> float:
    if isinstance(value, bool) or is_number(value):
        return float(value)
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        result = float(value.strip())
        if math.isfinite(result):
            return result
    raise OperandError(f"float() cannot read {describe(value)} as a number")


def _str(value: Any) -> str:
    try:
        return to_text(value)
    except TooDeep as exc:
        raise OperandError(f"too deep: str() reads a value {exc}") from None


def _date(value: Any) -> str:
    moment = parse_iso(value, strict=True)
    if moment is None:
        raise OperandError(f"date() needs an ISO date or datetime string, not {describe(value)}")
    day = moment.moment
    return (day.date() if isinstance(day, datetime) else day).isoformat()


def _pattern(kind: Any) -> Callable[[Any, Any], bool]:
    def test(value: Any, pattern: Any) -> bool:
        from dynamic_tools.engine.criteria import CriterionError, holds

        if not isinstance(pattern, str):
            raise OperandError(f"{kind}() needs a text pattern, not {describe(pattern)}")
        try:
            return holds(kind, pattern, value)
        except CriterionError as exc:
            raise OperandError(str(exc)) from None
        except TooDeep as exc:
            raise OperandError(f"too deep: {kind}() reads a value {exc}") from None

    return test


FUNCTIONS: dict[str, Function] = {
    "range": Function(_range, "range(start, stop[, step])", 2, 3),
    "len": Function(_len, "len(value)", 1, 1),
    "min": Function(_min, "min(list) / min(a, b, ...)", 1, None),
    "max": Function(_max, "max(list) / max(a, b, ...)", 1, None),
    "sum": Function(_sum, "sum(list)", 1, 1),
    "abs": Function(_abs, "abs(value)", 1, 1),
    "round": Function(_round, "round(number[, digits])", 1, 2),
    "lower": Function(_lower, "lower(text)", 1, 1),
    "upper": Function(_upper, "upper(text)", 1, 1),
    "contains": Function(_contains, "contains(haystack, needle)", 2, 2),
    "startswith": Function(_startswith, "startswith(text, prefix)", 2, 2),
    "endswith": Function(_endswith, "endswith(text, suffix)", 2, 2),
    "int": Function(_int, "int(value)", 1, 1),
    "float": Function(_float, "float(value)", 1, 1),
    "str": Function(_str, "str(value)", 1, 1),
    "date": Function(_date, "date(value)", 1, 1),
    "matches": Function(_pattern("regex"), "matches(text, regex)", 2, 2),
    "jsonpath": Function(_pattern("jsonpath"), "jsonpath(value, query)", 2, 2),
    "xpath": Function(_pattern("xpath"), "xpath(xml_text, query)", 2, 2),
}
"""Every function an expression may call, by name."""


__all__ = [
    "FUNCTIONS",
    "MAX_RANGE_ITEMS",
    "NONDETERMINISTIC",
    "Function",
]
