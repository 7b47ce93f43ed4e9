"""Safe by default: the one rule for every call a model composes.

A model composes a call when it chooses what is sent: ``{prefix}_query`` (the server's LLM
picks the operation or writes the GraphQL document), ``{prefix}_execute`` (the client's model
names the operation or writes the document), an ``r_*`` recipe (a ``_query`` answer replayed),
and every call of a run of a model-authored draft (``workflow.run`` / ``workflow.execute``
with ``content``, ``workflow.author_and_run``, ``workflow.repair_and_rerun``: its
``rest_call``s and ``call`` nodes alike). Such a call may only read:

- REST: the methods ``GET``, ``HEAD`` and ``OPTIONS``;
- GraphQL: a query (a subscription is refused anyway: there is no stream).

Anything else — ``POST``/``PUT``/``PATCH``/``DELETE``, a mutation — is refused before anything
is sent unless one of the session's ``X-Allow-Unsafe-Paths`` glob patterns matches the call:
the REST path (the operation's path template, ``/bookings/{id}``, or a ``rest_call``'s path),
the operation id (the tool's name, ``create_booking``), or, for a mutation, **each** of its
root fields (``addBook``). The refusal (:class:`~dynamic_tools.errors.UnsafeCallRefusedError`)
names the header and the exact patterns that would allow the call.

Calls a person declared keep what they declare: an operation's own tool (its MCP annotations
say whether it is destructive), and the calls of a saved workflow or of a session's
``X-Workflow-URL`` document. :func:`check_call` is the rule; every model-composed path calls it
(directly, or through :func:`llm_may_call` / :func:`query_choices` for what ``_query``
offers, and :func:`~dynamic_tools.tools.graphql.check_operation` for a GraphQL document).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from dynamic_tools.errors import UnsafeCallRefusedError
from dynamic_tools.tools.models import ToolConfig

__all__ = [
    "HEADER",
    "SAFE_METHODS",
    "GraphQLOperation",
    "RestCall",
    "changes_nothing",
    "check_call",
    "check_tool_call",
    "composed_call",
    "llm_may_call",
    "matches",
    "query_choices",
    "refusal",
]

HEADER = "X-Allow-Unsafe-Paths"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class RestCall:
    """A REST call: its method, its path, and its operation id when it has one."""

    method: str
    path: str
    operation_id: str | None = None


@dataclass(frozen=True)
class GraphQLOperation:
    """A GraphQL operation: its type (query, mutation, subscription) and its root fields."""

    kind: str
    fields: tuple[str, ...]


Call = RestCall | GraphQLOperation


def matches(name: str, allow: Sequence[str]) -> bool:
    """Whether a path, an operation id or a mutation field matches one of ``allow``."""
    return any(fnmatchcase(name, pattern) for pattern in allow)


def refusal(call: Call, allow: Sequence[str]) -> UnsafeCallRefusedError | None:
    """The refusal of ``call`` in a session allowing ``allow``; None when it may be sent."""
    if isinstance(call, RestCall):
        method = call.method.upper()
        if method in SAFE_METHODS:
            return None
        names = [call.path] + ([call.operation_id] if call.operation_id else [])
        if any(matches(name, allow) for name in names):
            return None
        what = f"{method} {call.path}" + (f" ({call.operation_id})" if call.operation_id else "")
        return _refused(what, "method", names)
    if call.kind != "mutation":
        return None  # a query; a subscription is refused where the document is checked
    refused = [name for name in call.fields if not matches(name, allow)]
    if not refused:
        return None
    return _refused("mutation " + ", ".join(refused), "query", refused)


def check_call(call: Call, allow: Sequence[str]) -> None:
    """Raise :class:`UnsafeCallRefusedError` unless ``call`` may be sent."""
    refused = refusal(call, allow)
    if refused is not None:
        raise refused


def composed_call(tool: ToolConfig, arguments: Mapping[str, Any]) -> Call | None:
    """What calling ``tool`` with ``arguments`` does, for the rule.

    A REST operation: its method, path template and name. A GraphQL tool: its fixed
    document's operation, or the one ``arguments`` give (``query``, ``operationName``); None
    when that document does not parse or names no single operation (the document check
    refuses it before anything is sent).
    """
    if tool.graphql is None:
        return RestCall(tool.api.method, tool.api.path, tool.name)
    document = tool.graphql.document
    name = None
    if document is None:
        document, name = arguments.get("query"), arguments.get("operationName")
    return _graphql_operation(document, name if isinstance(name, str) else None)


def check_tool_call(tool: ToolConfig, arguments: Mapping[str, Any], allow: Sequence[str]) -> None:
    """:func:`check_call` for a tool's call (see :func:`composed_call`)."""
    call = composed_call(tool, arguments)
    if call is not None:
        check_call(call, allow)


def changes_nothing(tool: ToolConfig) -> bool:
    """A REST ``GET``/``HEAD``/``OPTIONS``, a GraphQL query field, or a free query tool.

    A free query tool (``schema_sdl``) is checked per document instead.
    """
    if tool.graphql is not None:
        if tool.graphql.schema_sdl is not None:
            return True
        call = composed_call(tool, {})
        return not (isinstance(call, GraphQLOperation) and call.kind == "mutation")
    return tool.api.method in SAFE_METHODS


def llm_may_call(tool: ToolConfig, allow: Sequence[str]) -> bool:
    """Whether a model may pick ``tool`` on its own in a session allowing ``allow``."""
    if tool.graphql is not None and tool.graphql.schema_sdl is not None:
        return True  # each document is checked
    call = composed_call(tool, {})
    return call is None or refusal(call, allow) is None


def query_choices(
    free_query: ToolConfig | None, operations: Mapping[str, ToolConfig], allow: Sequence[str]
) -> dict[str, ToolConfig]:
    """What ``{prefix}_query`` offers the model, in MCP and in runs alike.

    A GraphQL API: its free query tool (each document is checked). A REST API: the operations
    the rule lets through (reads, and those ``allow`` matches).
    """
    if free_query is not None:
        return {free_query.name: free_query}
    return {name: tool for name, tool in operations.items() if llm_may_call(tool, allow)}


def _graphql_operation(document: Any, name: str | None) -> GraphQLOperation | None:
    if not isinstance(document, str):
        return None
    from graphql import FieldNode, GraphQLError, OperationDefinitionNode, parse

    try:
        parsed = parse(document, max_tokens=20_000)
    except (GraphQLError, RecursionError):
        return None
    operations = [
        d
        for d in parsed.definitions
        if isinstance(d, OperationDefinitionNode)
        and (name is None or (d.name is not None and d.name.value == name))
    ]
    if len(operations) != 1:
        return None
    operation = operations[0]
    fields = tuple(
        s.name.value for s in operation.selection_set.selections if isinstance(s, FieldNode)
    )
    return GraphQLOperation(operation.operation.value, fields)


def _refused(what: str, path: str, patterns: list[str]) -> UnsafeCallRefusedError:
    """The refusal: the header and the exact patterns that would allow the call."""
    options = " or ".join(f"'{p}'" for p in patterns)
    need = "each of" if path == "query" and len(patterns) > 1 else "one of"
    message = (
        f"{what} changes things and was composed by a model: refused (read-only by default); "
        f"nothing was sent. To allow it, the session's {HEADER} must match {need}: {options}"
    )
    return UnsafeCallRefusedError(
        message,
        violations=[
            {
                "path": path,
                "rule": "unsafe",
                "message": f"not allowed by {HEADER}",
                "expected": patterns,
                "actual": what,
            }
        ],
        context={"header": HEADER, "allow_with": patterns, "call": what},
    )
