"""What the expression language's operators do to values: equality, order, arithmetic, dates.

Values are JSON values (null, booleans, numbers, strings, lists, objects) plus durations
(``datetime.timedelta``, made by ``7 days``). Booleans are not numbers here: ``true == 1`` is
false and ``true + 1`` is an error. ISO date strings (``YYYY-MM-DD``) and datetime strings
(``YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]``) stay strings, but they order as dates and a
duration can be added to or subtracted from them, giving a string of the same kind and style.

A value that does not suit an operation raises ``OperandError``; the evaluator turns it into an
``ExpressionError`` that carries the expression and the operator's position.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from dynamic_tools.engine.references import describe

ONE_DAY = timedelta(days=1)

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?P<sep>[T ])[0-9]{2}:[0-9]{2}"
    r"(?P<seconds>:[0-9]{2}(?:\.[0-9]{1,6})?)?(?P<zone>Z|[+-][0-9]{2}:?[0-9]{2})?"
)


class OperandError(Exception):
    """A value does not suit an operation; the message says which value and why."""


@dataclass(frozen=True, slots=True)
class IsoMoment:
    """An ISO date or datetime string, parsed, with the style to write results back in."""

    moment: date | datetime
    separator: str = "T"
    seconds: bool = True
    zulu: bool = False

    @property
    def is_datetime(self) -> bool:
        """Whether this is a datetime (a ``date`` otherwise)."""
        return isinstance(self.moment, datetime)

    def write(self, moment: date | datetime) -> str:
        """``moment`` as an ISO string in this value's style (``Z``, separator, seconds)."""
        if not isinstance(moment, datetime):
            return moment.isoformat()
        exact = self.seconds or moment.second or moment.microsecond
        text = moment.isoformat(sep=self.separator, timespec="auto" if exact else "minutes")
        if self.zulu and text.endswith("+00:00"):
            text = text[:-6] + "Z"
        return text

    def minus(self, other: IsoMoment) -> timedelta:
        """The duration from ``other`` to this moment (both dates, or both datetimes).

        Raises:
            OperandError: One datetime has a time zone and the other not.
        """
        moment: Any = self.moment
        try:
            difference: timedelta = moment - other.moment
        except TypeError:
            raise OperandError(
                f"cannot subtract {other.write(other.moment)!r} from {self.write(moment)!r}: "
                "one has a time zone and the other not"
            ) from None
        return difference

    def shifted(self, delta: timedelta) -> str:
        """This moment plus ``delta``, written in this value's style.

        Raises:
            OperandError: A date shifted by a part of a day, or a result outside years 1-9999.
        """
        if not self.is_datetime and delta % ONE_DAY:
            raise OperandError(
                f"a date can only move by whole days, not {delta}; use a datetime string"
            )
        try:
            return self.write(self.moment + delta)
        except OverflowError:
            raise OperandError("the resulting date falls outside the years 1-9999") from None


def parse_iso(value: Any, *, strict: bool) -> IsoMoment | None:
    """``value`` as an ISO date or datetime, or None when it does not look like one.

    Raises:
        OperandError: ``strict`` and ``value`` looks like an ISO date but is not a real one
            (``2026-02-30``).
    """
    if not isinstance(value, str):
        return None
    try:
        if _DATE.fullmatch(value):
            return IsoMoment(date.fromisoformat(value))
        shape = _DATETIME.fullmatch(value)
        if shape:
            return IsoMoment(
                datetime.fromisoformat(value),
                separator=shape["sep"],
                seconds=shape["seconds"] is not None,
                zulu=shape["zone"] == "Z",
            )
    except ValueError:
        if strict:
            raise OperandError(f"{value!r} is not a valid date or datetime") from None
    return None


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (booleans are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def truthy(value: Any) -> bool:
    """Python truthiness: null, false, 0, "", [] and {} are false; everything else is true."""
    return bool(value)


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values, where booleans never equal numbers (``1 == 1.0`` holds).

    Pairs are compared from an explicit stack: values from an API may nest deeply.
    """
    pairs = [(left, right)]
    while pairs:
        a, b = pairs.pop()
        if isinstance(a, bool) or isinstance(b, bool):
            if not (isinstance(a, bool) and isinstance(b, bool) and a == b):
                return False
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
            if len(a) != len(b):
                return False
            pairs.extend(zip(a, b, strict=True))
        elif isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pairs.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list | tuple | dict) or isinstance(b, list | tuple | dict):
            return False  # a container never equals a scalar or the other kind of container
        elif not bool(a == b):
            return False
    return True


def compare(left: Any, right: Any, where: str) -> int:
    """-1, 0 or 1 as ``left`` is below, equal to or above ``right``.

    Numbers order as numbers, durations as durations; two ISO dates (or two ISO datetimes)
    order as dates; other strings order as strings. ``where`` ends the error message.

    Raises:
        OperandError: The two values cannot be ordered (e.g. a number and a string).
    """
    if is_number(left) and is_number(right):
        pair: tuple[Any, Any] = (left, right)
    elif isinstance(left, str) and isinstance(right, str):
        moments = _as_moments(left, right)
        pair = (moments[0].moment, moments[1].moment) if moments else (left, right)
    elif isinstance(left, timedelta) and isinstance(right, timedelta):
        pair = (left, right)
    else:
        raise OperandError(f"cannot compare {describe(left)} with {describe(right)} {where}")
    try:
        return int(pair[0] > pair[1]) - int(pair[0] < pair[1])
    except TypeError:
        raise OperandError(
            f"cannot compare {left!r} with {right!r} {where}: one has a time zone and the other not"
        ) from None


def contains(container: Any, item: Any) -> bool:
    """``item in container``: a list element, a substring, or an object's key.

    Raises:
        OperandError: ``container`` is not a list, string or object, or ``item`` cannot be in it.
    """
    if isinstance(container, list | tuple):
        return any(json_equal(element, item) for element in container)
    if isinstance(container, str | dict):
        if not isinstance(item, str):
            raise OperandError(f"cannot look for {describe(item)} in {describe(container)}")
        return item in container
    raise OperandError(f"'in' needs a list, string or object, not {describe(container)}")


def add(left: Any, right: Any) -> Any:
    """``left + right``: numbers, strings, lists, durations, or an ISO date plus a duration."""
    if is_number(left) and is_number(right):
        return _finite(left + right)
    if isinstance(left, timedelta) and isinstance(right, timedelta):
        return _checked(lambda: left + right)
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, list) and isinstance(right, list):
        return left + right
    if isinstance(left, str) and isinstance(right, timedelta):
        return _moment(left, "+").shifted(right)
    if isinstance(left, timedelta) and isinstance(right, str):
        return _moment(right, "+").shifted(left)
    raise _mismatch("+", left, right)


def subtract(left: Any, right: Any) -> Any:
    """``left - right``: numbers, durations, a date minus a duration, or date minus date."""
    if is_number(left) and is_number(right):
        return _finite(left - right)
    if isinstance(left, timedelta) and isinstance(right, timedelta):
        return _checked(lambda: left - right)
    if isinstance(left, str) and isinstance(right, timedelta):
        return _moment(left, "-").shifted(-right)
    if isinstance(left, str) and isinstance(right, str):
        moments = _as_moments(left, right, strict=True)
        if moments is not None:
            return moments[0].minus(moments[1])
    raise _mismatch("-", left, right)


def multiply(left: Any, right: Any) -> Any:
    """``left * right``: numbers, or a duration and a number."""
    if is_number(left) and is_number(right):
        return _finite(left * right)
    if isinstance(left, timedelta) and is_number(right):
        return _checked(lambda: left * right)
    if is_number(left) and isinstance(right, timedelta):
        return _checked(lambda: right * left)
    raise _mismatch("*", left, right)


def divide(left: Any, right: Any) -> Any:
    """``left / right`` (always true division): numbers, a duration by a number or duration."""
    numeric = is_number(right) and (is_number(left) or isinstance(left, timedelta))
    if numeric or (isinstance(left, timedelta) and isinstance(right, timedelta)):
        if not right:
            raise OperandError("division by zero")
        return _finite(left / right) if is_number(left) else _checked(lambda: left / right)
    raise _mismatch("/", left, right)


def modulo(left: Any, right: Any) -> Any:
    """``left % right`` for numbers, with Python's sign rule (the result takes right's sign)."""
    if is_number(left) and is_number(right):
        if not right:
            raise OperandError("modulo by zero")
        return _finite(left % right)
    raise _mismatch("%", left, right)


def negate(value: Any) -> Any:
    """``-value`` for a number or a duration."""
    if is_number(value):
        return -value
    if isinstance(value, timedelta):
        return _checked(lambda: -value)
    raise OperandError(f"cannot negate {describe(value)}")


def make_duration(count: Any, unit: str) -> timedelta:
    """``<count> <unit>``, e.g. ``make_duration(7, "days")``."""
    if not is_number(count):
        raise OperandError(f"a duration needs a number before '{unit}', not {describe(count)}")
    duration: timedelta = _checked(lambda: timedelta(**{unit: count}))
    return duration


def _as_moments(
    left: str, right: str, *, strict: bool = False
) -> tuple[IsoMoment, IsoMoment] | None:
    first = parse_iso(left, strict=strict)
    second = parse_iso(right, strict=strict)
    if first is None or second is None or first.is_datetime != second.is_datetime:
        return None
    return first, second


def _moment(text: str, op: str) -> IsoMoment:
    moment = parse_iso(text, strict=True)
    if moment is None:
        raise OperandError(
            f"cannot apply '{op}' to {describe(text)} and a duration: "
            "the string is not an ISO date (YYYY-MM-DD) or datetime"
        )
    return moment


def _mismatch(op: str, left: Any, right: Any) -> OperandError:
    hint = ""
    if op in "+-" and parse_iso(left, strict=False) and is_number(right):
        hint = f"; to move a date write a duration such as '{right} days'"
    return OperandError(f"cannot apply '{op}' to {describe(left)} and {describe(right)}{hint}")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise OperandError("the result is too large to represent")
    return value


def _checked(operation: Callable[[], Any]) -> Any:
    try:
        return operation()
    except OverflowError:
        raise OperandError("the duration is too large to represent") from None


__all__ = [
    "ONE_DAY",
    "IsoMoment",
    "OperandError",
    "add",
    "compare",
    "contains",
    "divide",
    "is_number",
    "json_equal",
    "make_duration",
    "modulo",
    "multiply",
    "negate",
    "parse_iso",
    "subtract",
    "truthy",
]
