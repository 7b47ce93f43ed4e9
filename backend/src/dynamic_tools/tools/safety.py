"""Safe by default: what an LLM-driven call may reach without the session's say-so.

``{prefix}_query`` (and the recipes learned from it) let a model choose the operation. Such a
call may use only operations that change nothing: a REST ``GET``, a GraphQL query. An
operation that changes things is offered only when one of the session's
``X-Allow-Unsafe-Paths`` glob patterns matches its path (``/bookings*``) or its name
(``create_booking``, a mutation field ``createBooking``). A free GraphQL query tool is checked
per query instead (``tools/graphql/operations.py``). Calls a person or a workflow declares
(an operation's own tool, ``{prefix}_execute``, a workflow's ``call``) are not restricted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dynamic_tools.tools.graphql import unsafe_allowed
from dynamic_tools.tools.models import ToolConfig

__all__ = ["changes_nothing", "llm_may_call", "query_choices"]


def changes_nothing(tool: ToolConfig) -> bool:
    """A REST ``GET``, or a GraphQL query field (a free query tool: checked per query)."""
    if tool.graphql is not None:
        return tool.graphql.schema_sdl is not None or bool(tool.effective_annotations.read_only)
    return tool.api.method == "GET"


def llm_may_call(tool: ToolConfig, allow: Sequence[str]) -> bool:
    """Whether a model may pick ``tool`` on its own in a session allowing ``allow``."""
    if changes_nothing(tool):
        return True
    return unsafe_allowed(tool.api.path, allow) or unsafe_allowed(tool.name, allow)


def query_choices(
    free_query: ToolConfig | None, operations: Mapping[str, ToolConfig], allow: Sequence[str]
) -> dict[str, ToolConfig]:
    """What ``{prefix}_query`` offers the model, in MCP and in runs alike.

    A GraphQL API: its free query tool (each query is checked). A REST API: the operations that
    change nothing, and those ``allow`` (``X-Allow-Unsafe-Paths``) matches.
    """
    if free_query is not None:
        return {free_query.name: free_query}
    return {name: tool for name, tool in operations.items() if llm_may_call(tool, allow)}
