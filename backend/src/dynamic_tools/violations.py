"""One violation type for the whole product: what is wrong, and where.

A workflow document's problems (the validator), a tool call's arguments that do not match
the tool's input schema (the invoker), a request's fields (the API's 422): each is a
:class:`Violation` with a ``path`` (``params.date``, ``graph.book.args.flight_id``,
``arguments.passenger.name``), a ``rule`` (``required``, ``type``, ``unknown_tool``...) and a
``message``; ``line`` when the source has lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field

from dynamic_tools.sparse import Sparse

_V = TypeVar("_V", bound=Mapping[str, Any])

__all__ = [
    "LoadProblem",
    "Problem",
    "Violation",
    "describe",
    "errors_only",
    "is_error",
    "syntax_position",
    "where_in_text",
]


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


class Problem(Sparse):
    """A violation or a file problem: where and why (the validator's shape, and more).

    ``message``, ``path``, ``rule`` and ``line`` are always there; every other key only where
    the check that found the problem gives it (each check's keys are declared here, so the
    shape is closed: a key no field names is not answered).
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {
            "severity",
            "column",
            "expected",
            "actual",
            "field",
            "tool",
            "file",
            "reason",
            "header",
            "table",
            "expression",
            "position",
            "node_id",
            "violations",
        }
    )

    message: str
    path: str | None = None
    rule: str | None = None
    line: int | None = Field(default=None, description="1-based, when the source has lines")
    severity: Literal["error", "warning"] | None = Field(
        default=None, description="error (when absent too) or warning"
    )
    column: int | None = Field(default=None, description="1-based, with line (a syntax error)")
    expected: Any = Field(default=None, description="What the rule wants (a type, a limit...)")
    actual: Any = Field(default=None, description="What was given instead")
    field: str | None = Field(default=None, description="The field at fault (a tool's, a body's)")
    tool: str | None = Field(default=None, description="The tool the problem is about")
    file: str | None = Field(default=None, description="The file the problem is in")
    reason: str | None = Field(default=None, description="A file problem's message, again")
    header: str | None = Field(default=None, description="The request header at fault")
    table: str | None = Field(default=None, description="A SQL query's table at fault")
    expression: str | None = Field(default=None, description="The expression at fault")
    position: int | None = Field(default=None, description="Where in the expression")
    node_id: str | None = Field(default=None, description="The node the problem is about")
    violations: list[Problem] | None = Field(
        default=None, description="A file problem's own violations"
    )


@dataclass(frozen=True)
class LoadProblem:
    """A file, or a definition in it (a tool, a workflow), that did not load.

    ``rule`` says what kind of problem (``unreadable``, ``invalid``, ``duplicate``...); ``field``
    where in a tool file; ``tool`` the tool's name when one is known; ``violations`` the
    located problems of a file that parsed but did not validate.
    """

    file: str
    rule: str | None = None
    message: str = ""
    line: int | None = None
    violations: list[dict[str, Any]] = field(default_factory=list)
    tool: str | None = None
    field: str | None = None

    @property
    def reason(self) -> str:
        """The message (the name tool files have always used)."""
        return self.message

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``reason`` repeats ``message`` for the tool routes' readers)."""
        return {
            "file": self.file,
            "rule": self.rule,
            "message": self.message,
            "line": self.line,
            "violations": self.violations,
            "tool": self.tool,
            "field": self.field,
            "reason": self.message,
        }


def describe(violations: Iterable[Violation], *, limit: int = 5) -> str:
    """``path: message; path: message`` of the first ``limit`` violations."""
    return "; ".join(f"{v.path}: {v.message}" for v in list(violations)[:limit])


def is_error(violation: Mapping[str, Any]) -> bool:
    """Whether a violation (its JSON form) is an error: one without a severity is."""
    return bool(violation.get("severity", "error") == "error")


def errors_only(violations: Iterable[_V]) -> list[_V]:
    """The violations (JSON forms) that are errors, in their order; warnings left out."""
    return [v for v in violations if is_error(v)]


def syntax_position(exc: BaseException) -> tuple[int | None, int | None, str]:
    """Where a parser's error is, 1-based, and what it says: ``(line, column, problem)``.

    Reads the ``problem_mark`` and ``problem`` a PyYAML error carries; line and column are None
    for an error without a mark, and the problem is then the error's text.
    """
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return line, column, str(getattr(exc, "problem", None) or exc)


def where_in_text(exc: BaseException) -> str | None:
    """``line L, column C: problem`` for an error with a position; None without one."""
    line, column, problem = syntax_position(exc)
    return f"line {line}, column {column}: {problem}" if line is not None else None
