"""Evaluating a parsed expression against the values its references name.

Evaluation is a walk of the immutable tree from ``expression_ast``; it never compiles or
executes text. References are resolved through the caller's ``resolve`` callable, one at a
time and only when reached, so ``$a != null && $a.x > 0`` never resolves ``$a.x`` when ``$a``
is null.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.expression_ast import (
    Binary,
    Call,
    Constant,
    Duration,
    Expression,
    ListNode,
    Logical,
    Node,
    ReferenceNode,
    Unary,
)
from dynamic_tools.engine.expression_functions import FUNCTIONS
from dynamic_tools.engine.expression_values import (
    OperandError,
    add,
    compare,
    contains,
    divide,
    json_equal,
    make_duration,
    modulo,
    multiply,
    negate,
    subtract,
    truthy,
)
from dynamic_tools.engine.references import Reference

Resolve = Callable[[Reference], Any]
"""Returns the value a reference names; raises ``UnresolvedReferenceError`` (or KeyError)."""

BINARY_OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": json_equal,
    "!=": lambda left, right: not json_equal(left, right),
    "<": lambda left, right: compare(left, right, "using '<'") < 0,
    "<=": lambda left, right: compare(left, right, "using '<='") <= 0,
    ">": lambda left, right: compare(left, right, "using '>'") > 0,
    ">=": lambda left, right: compare(left, right, "using '>='") >= 0,
    "in": lambda left, right: contains(right, left),
    "not in": lambda left, right: not contains(right, left),
    "+": add,
    "-": subtract,
    "*": multiply,
    "/": divide,
    "%": modulo,
}


def evaluate(expr: Expression, resolve: Resolve, *, node_id: str | None = None) -> Any:
    """The value of ``expr``, resolving its references with ``resolve``.

    ``&&``/``||``/``!`` return booleans and short-circuit: a reference on a side that is not
    needed is never resolved. The result is a JSON value, or a ``datetime.timedelta`` when
    the whole expression is a duration.

    Args:
        expr: A parsed expression (``parse_expression``).
        resolve: Gives the value of one reference; see ``references.resolve_reference``.
        node_id: The workflow node holding the expression, named in errors.

    Raises:
        ExpressionError: An operation or function got values it cannot take (with the
            position of the operator or call), e.g. ``cannot compare a number (3) with a
            string ('x') using '<'`` or ``division by zero``.
        UnresolvedReferenceError: A reference could not be resolved.
    """
    return _Evaluation(expr, resolve, node_id).value(expr.root)


class _Evaluation:
    """One evaluation: the expression, its resolver and the node to name in errors."""

    def __init__(self, expr: Expression, resolve: Resolve, node_id: str | None) -> None:
        self._expr = expr
        self._resolve = resolve
        self._node_id = node_id

    def value(self, node: Node) -> Any:
        """The value of ``node``."""
        match node:
            case Constant(value=value):
                return value
            case ReferenceNode(reference=reference):
                return self._reference(reference)
            case ListNode(items=items):
                return [self.value(item) for item in items]
            case Logical(op="and", left=left, right=right):
                return truthy(self.value(left)) and truthy(self.value(right))
            case Logical(left=left, right=right):
                return truthy(self.value(left)) or truthy(self.value(right))
            case Unary(op="not", operand=operand):
                return not truthy(self.value(operand))
            case Unary(operand=operand):
                return self._apply(node, negate, self.value(operand))
            case Binary(op=op, left=left, right=right):
                operands = (self.value(left), self.value(right))
                return self._apply(node, BINARY_OPERATIONS[op], *operands)
            case Duration(count=count, unit=unit):
                return self._apply(node, make_duration, self.value(count), unit)
            case Call(name=name, args=args):
                values = [self.value(arg) for arg in args]
                return self._apply(node, FUNCTIONS[name].implementation, *values)
        raise AssertionError(f"unknown expression node {node!r}")  # pragma: no cover

    def _reference(self, reference: Reference) -> Any:
        try:
            return self._resolve(reference)
        except KeyError:
            raise UnresolvedReferenceError(
                f"no parameter, output, loop variable or yield named {reference.name!r}",
                reference=reference.text,
                node_id=self._node_id,
            ) from None
        except UnresolvedReferenceError as error:
            raise error.with_node(self._node_id) from error.__cause__

    def _apply(self, node: Node, operation: Callable[..., Any], *operands: Any) -> Any:
        try:
            return operation(*operands)
        except OperandError as error:
            detail = str(error)
        except (ArithmeticError, ValueError, TypeError) as error:
            # A safety net: an input no check anticipated still gets a located, typed error.
            detail = f"cannot evaluate this part of the expression: {error}"
        raise ExpressionError(
            detail, expression=self._expr.text, position=node.position, node_id=self._node_id
        )


__all__ = [
    "BINARY_OPERATIONS",
    "Resolve",
    "evaluate",
]
