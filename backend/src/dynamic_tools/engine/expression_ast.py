"""The immutable syntax tree of the expression language (see ``docs/expressions.md``).

Every node records ``position``, the 0-based offset in the source text that errors about the
node point at: the operator of a unary or binary node, the name of a call, the ``[`` of a list,
the unit word of a duration, the first character of a literal or reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal as Kind
from typing import TypeAlias

from dynamic_tools.engine.references import Reference

Scalar: TypeAlias = bool | int | float | str | None

Unit: TypeAlias = Kind["seconds", "minutes", "hours", "days", "weeks"]

UNITS: dict[str, Unit] = {
    "second": "seconds",
    "seconds": "seconds",
    "minute": "minutes",
    "minutes": "minutes",
    "hour": "hours",
    "hours": "hours",
    "day": "days",
    "days": "days",
    "week": "weeks",
    "weeks": "weeks",
}
"""Unit words (singular or plural) to the ``datetime.timedelta`` argument they mean."""

BinaryOp: TypeAlias = Kind[
    "==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/", "%"
]
LogicalOp: TypeAlias = Kind["and", "or"]
UnaryOp: TypeAlias = Kind["not", "-"]


@dataclass(frozen=True, slots=True)
class Constant:
    """A literal: a number, a string, ``true``/``false`` or ``null``."""

    value: Scalar
    position: int


@dataclass(frozen=True, slots=True)
class ReferenceNode:
    """A ``$name.path`` reference, resolved by the caller's ``resolve`` at evaluation."""

    reference: Reference
    position: int


@dataclass(frozen=True, slots=True)
class ListNode:
    """A list literal ``[a, b]``."""

    items: tuple[Node, ...]
    position: int


@dataclass(frozen=True, slots=True)
class Unary:
    """``-x`` or ``!x`` / ``not x``."""

    op: UnaryOp
    operand: Node
    position: int


@dataclass(frozen=True, slots=True)
class Binary:
    """A comparison, membership test or arithmetic operation."""

    op: BinaryOp
    left: Node
    right: Node
    position: int


@dataclass(frozen=True, slots=True)
class Logical:
    """``&&``/``and`` or ``||``/``or``; the right side is evaluated only when needed."""

    op: LogicalOp
    left: Node
    right: Node
    position: int


@dataclass(frozen=True, slots=True)
class Duration:
    """``<count> <unit>``, e.g. ``7 days`` or ``$num_days days``."""

    count: Node
    unit: Unit
    position: int


@dataclass(frozen=True, slots=True)
class Call:
    """A call of one of the fixed functions, e.g. ``range($a, $b)``."""

    name: str
    args: tuple[Node, ...]
    position: int


Node: TypeAlias = Constant | ReferenceNode | ListNode | Unary | Binary | Logical | Duration | Call


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed expression: the source text and the root of its tree."""

    text: str
    root: Node


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes of ``node``, left to right."""
    match node:
        case ListNode(items=items) | Call(args=items):
            return items
        case Unary(operand=operand):
            return (operand,)
        case Binary(left=left, right=right) | Logical(left=left, right=right):
            return (left, right)
        case Duration(count=count):
            return (count,)
        case _:
            return ()


def walk(node: Node) -> Iterator[tuple[Node, int]]:
    """Every node under (and including) ``node`` with its depth (the root is 1); no recursion."""
    stack: list[tuple[Node, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        yield current, depth
        stack.extend((child, depth + 1) for child in reversed(children(current)))


__all__ = [
    "UNITS",
    "Binary",
    "BinaryOp",
    "Call",
    "Constant",
    "Duration",
    "Expression",
    "ListNode",
    "Logical",
    "LogicalOp",
    "Node",
    "ReferenceNode",
    "Scalar",
    "Unary",
    "UnaryOp",
    "Unit",
    "children",
    "walk",
]
