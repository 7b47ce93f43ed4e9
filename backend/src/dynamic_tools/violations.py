"""One violation type for the whole product: what is wrong, and where.

A workflow document's problems (the validator), a tool call's arguments that do not match
the tool's input schema (the invoker), a request's fields (the API's 422): each is a
:class:`Violation` with a ``path`` (``params.date``, ``graph.book.args.flight_id``,
``arguments.passenger.name``), a ``rule`` (``required``, ``type``, ``unknown_tool``...) and a
``message``; ``line`` when the source has lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Violation", "describe"]


@dataclass(frozen=True)
class Violation:
    """One problem, located."""

    path: str
    rule: str
    message: str
    severity: str = "error"
    line: int | None = None
    expected: Any = None
    actual: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "path": self.path,
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity,
            "line": self.line,
            "expected": self.expected,
            "actual": self.actual,
        }


def describe(violations: Iterable[Violation], *, limit: int = 5) -> str:
    """``path: message; path: message`` of the first ``limit`` violations."""
    return "; ".join(f"{v.path}: {v.message}" for v in list(violations)[:limit])
