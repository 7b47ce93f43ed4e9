"""Request value types that accept exactly what the OpenAPI document says they accept.

Bodies are validated strictly (no ``"5"`` for 5, no ``0`` for false); these types cover the
cases where strict and lax validation both differ from JSON Schema.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator

# RFC 3339 date-time, as 'format: date-time' says: no Unix timestamps, no bare dates.
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


def _rfc3339(value: object) -> object:
    if not isinstance(value, str) or not _DATE_TIME.fullmatch(value):
        raise ValueError("expected an ISO 8601 date-time, e.g. 2026-12-01T09:30:00Z")
    return value.upper()  # RFC 3339 allows 't' and 'z'


def _in_utc(value: datetime) -> datetime:
    """In UTC, as the run store compares; past the calendar's ends, its first or last instant."""
    try:
        return value.astimezone(UTC)
    except OverflowError:
        edge = datetime.min if value.year == 1 else datetime.max
        return edge.replace(tzinfo=UTC)


def _json_integer(value: object) -> object:
    # JSON Schema's integer is a number with no fraction: 5 and 5.0, never "5" nor true.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("expected an integer")
    return value


DateTime = Annotated[datetime, BeforeValidator(_rfc3339), AfterValidator(_in_utc)]
"""A date-time with its offset, read in UTC."""

JSON_INTEGER = BeforeValidator(_json_integer)
"""Reads an integer as JSON Schema has it, in a strictly validated body.

Put it after any ``Field`` constraints: ``Annotated[int, Field(ge=1), JSON_INTEGER]`` (placed
before them, the constraints would not reach the OpenAPI document).
"""
