"""Checking a GraphQL operation before it is sent: parsed, validated against the schema, bounded.

A query written by an LLM (``{prefix}_query``) or given by a client (``{prefix}_execute``) is
parsed with a token budget, refused past a nesting depth, validated against the schema with
graphql-core's rules, and, when it is a mutation, allowed only if each of its root fields
matches one of the tool's ``allow_mutations`` (the one rule of ``tools/safety.py``: safe by
default). Every problem is a violation naming the argument, GraphQL's message, and the line and
column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    parse,
    validate,
)

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.safety import GraphQLOperation, check_call

__all__ = ["CheckedOperation", "check_operation"]

MAX_QUERY_TOKENS = 20_000
MAX_DEPTH = 20
MAX_ERRORS = 10


@dataclass(frozen=True)
class CheckedOperation:
    """What a valid operation is: its kind and its root fields."""

    kind: str  # query | mutation | subscription
    root_fields: tuple[str, ...]


def check_operation(
    schema: GraphQLSchema,
    query: Any,
    *,
    operation_name: str | None = None,
    allow_mutations: list[str] | tuple[str, ...] = (),
    field: str = "query",
) -> CheckedOperation:
    """Parse and validate ``query`` against ``schema``.

    Raises:
        InvalidInputError: not a string, does not parse, nests deeper than :data:`MAX_DEPTH`,
            fails validation, is a subscription, or is a mutation not allowed.
    """
    if not isinstance(query, str) or not query.strip():
        raise _refused(field, "type", "the query must be a non-empty string")
    try:
        document = parse(query, max_tokens=MAX_QUERY_TOKENS)
    except GraphQLError as exc:
        raise _from_errors(field, "the GraphQL query does not parse", [exc]) from None
    except RecursionError:
        raise _refused(field, "depth", f"the query nests deeper than {MAX_DEPTH}") from None
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    for operation in operations:
        if _depth(operation.selection_set, fragments) > MAX_DEPTH:
            raise _refused(field, "depth", f"the query nests deeper than {MAX_DEPTH}")
    errors = validate(schema, document, max_errors=MAX_ERRORS)
    if errors:
        raise _from_errors(field, "the GraphQL query is not valid for the schema", errors)
    chosen = [o for o in operations if operation_name is None or _name(o) == operation_name]
    if len(chosen) != 1:
        names = ", ".join(_name(o) or "(anonymous)" for o in operations)
        raise _refused(
            "operationName",
            "operation",
            f"name one operation of the document with operationName (it holds {names})",
        )
    operation = chosen[0]
    roots = tuple(
        s.name.value for s in operation.selection_set.selections if isinstance(s, FieldNode)
    )
    if operation.operation == OperationType.SUBSCRIPTION:
        raise _refused(field, "operation", "subscriptions are not supported (no stream here)")
    check_call(GraphQLOperation(operation.operation.value, roots), allow_mutations)
    return CheckedOperation(operation.operation.value, roots)


def _name(operation: OperationDefinitionNode) -> str | None:
    return operation.name.value if operation.name else None


def _depth(selection_set: SelectionSetNode | None, fragments: dict[str, Any]) -> int:
    """How deep fields nest under ``selection_set`` (fragments measured once each)."""
    measured: dict[str, int] = {}

    def depth(selections: SelectionSetNode | None, visiting: frozenset[str], level: int) -> int:
        """The deepest level reached below ``level`` (not walked past MAX_DEPTH)."""
        if selections is None or level > MAX_DEPTH:
            return level
        deepest = level
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                if selection.selection_set is not None:
                    deepest = max(deepest, depth(selection.selection_set, visiting, level + 1))
            elif isinstance(selection, InlineFragmentNode):
                deepest = max(deepest, depth(selection.selection_set, visiting, level))
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name in visiting or name not in fragments:
                    continue  # a cycle or an unknown fragment: validation names it
                if name not in measured:
                    measured[name] = depth(fragments[name].selection_set, visiting | {name}, 0)
                deepest = max(deepest, level + measured[name])
            if deepest > MAX_DEPTH:
                break
        return deepest

    return depth(selection_set, frozenset(), 0)


def _refused(field: str, rule: str, message: str) -> InvalidInputError:
    return InvalidInputError(
        message, violations=[{"path": field, "rule": rule, "message": message}]
    )


def _from_errors(field: str, summary: str, errors: list[GraphQLError]) -> InvalidInputError:
    violations = []
    for error in errors[:MAX_ERRORS]:
        violation: dict[str, Any] = {"path": field, "rule": "graphql", "message": error.message}
        if error.locations:
            violation.update(line=error.locations[0].line, column=error.locations[0].column)
        violations.append(violation)
    first = violations[0]
    where = f" (line {first['line']}, column {first['column']})" if "line" in first else ""
    return InvalidInputError(f"{summary}: {first['message']}{where}", violations=violations)
