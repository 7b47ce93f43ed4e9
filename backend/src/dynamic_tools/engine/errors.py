"""Errors of the engine: its control flow, its expression language and reference resolver.

Control flow (how a run unwinds) roots under :class:`EngineError`: ``RunFailed`` and
``FallbackTriggered`` (``engine/state.py``), ``ChildFailed``, ``ChildCancelled`` and
``GatherCancelled`` (``engine/ports.py``). Each carries ``node_id``, ``attempt`` and
``retryable``.

The expression and reference errors sit in the project's one error tree (``dynamic_tools.errors``)::

    DynamicToolsError
    ├── InvalidInputError
    │   └── ExpressionError         a ``when``/``items`` expression is malformed or fails
    └── UnresolvedReferenceError    a ``$name.path`` names nothing, or its path does not fit

Each carries the data an author needs to fix the document (the expression and the 0-based
character position, the reference text and the failing segment) and the workflow node, when the
caller knows it. ``with_node`` fills the node in on the way up without losing the rest.
"""

from __future__ import annotations

from typing import Any

from dynamic_tools.errors import DynamicToolsError, InvalidInputError


class EngineError(BaseException):
    """Root of the engine's control-flow errors; they carry where and how a run unwinds.

    It derives from :class:`BaseException` only so the cancellations (which must stay
    :class:`asyncio.CancelledError`) can share it: every other subclass also derives from
    :class:`Exception`. ``attempt`` is the attempt of the node's call when there was one;
    ``retryable`` says whether trying the same thing again could succeed.
    """

    node_id: str | None = None
    attempt: int | None = None
    retryable: bool = False


_SHOWN = 120  # a message quotes at most this much of the expression; the field keeps it all


class ExpressionError(InvalidInputError):
    """An expression could not be parsed or evaluated.

    Attributes:
        expression: The expression text as written.
        position: The 0-based character offset of the problem, or None when it has none.
        node_id: The workflow node holding the expression, when known.
        detail: The problem alone, without the location (the message adds the location).
    """

    code = "invalid_expression"

    def __init__(
        self,
        detail: str,
        *,
        expression: str,
        position: int | None = None,
        node_id: str | None = None,
    ) -> None:
        self.detail = detail
        self.expression = expression
        self.position = position
        self.node_id = node_id
        where = f" at position {position}" if position is not None else ""
        node = f" (node {node_id!r})" if node_id is not None else ""
        shown = expression if len(expression) <= _SHOWN else expression[: _SHOWN - 3] + "..."
        message = f"{detail}{where} in {shown!r}{node}"
        violation: dict[str, Any] = {"expression": expression, "position": position}
        if node_id is not None:
            violation["node_id"] = node_id
        violation["message"] = detail
        super().__init__(
            message,
            violations=[violation],
            context={"expression": expression, "position": position, "node_id": node_id},
        )

    def with_node(self, node_id: str | None) -> ExpressionError:
        """This error with ``node_id`` filled in (unchanged if it already names a node)."""
        if self.node_id is not None or node_id is None:
            return self
        error = ExpressionError(
            self.detail, expression=self.expression, position=self.position, node_id=node_id
        )
        error.__cause__ = self.__cause__
        return error


class UnresolvedReferenceError(DynamicToolsError):
    """A ``$name.path`` reference could not be resolved; never a silent null.

    Attributes:
        reference: The reference as written, e.g. ``$flight_results.3.id``.
        node_id: The workflow node holding the reference, when known.
        segment: The path segment that failed (``3``), or None when the name itself is unknown.
        detail: What was found instead, e.g. ``index 3 out of range for a list of 2``.
    """

    code = "unresolved_reference"

    def __init__(
        self,
        detail: str,
        *,
        reference: str,
        node_id: str | None = None,
        segment: str | int | None = None,
    ) -> None:
        self.detail = detail
        self.reference = reference
        self.node_id = node_id
        self.segment = segment
        node = f" in node {node_id!r}" if node_id is not None else ""
        super().__init__(
            f"cannot resolve {reference}{node}: {detail}",
            context={"reference": reference, "node_id": node_id, "segment": segment},
        )

    def with_node(self, node_id: str | None) -> UnresolvedReferenceError:
        """This error with ``node_id`` filled in (unchanged if it already names a node)."""
        if self.node_id is not None or node_id is None:
            return self
        error = UnresolvedReferenceError(
            self.detail, reference=self.reference, node_id=node_id, segment=self.segment
        )
        error.__cause__ = self.__cause__
        return error


__all__ = [
    "EngineError",
    "ExpressionError",
    "UnresolvedReferenceError",
]
