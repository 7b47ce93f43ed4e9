"""The ``error`` node: fail the run with an interpolated message.

An error node runs only when something activates it or after its dependencies; one that is
neither activated nor behind a dependency would fail every run, which validation refuses.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from dynamic_tools.engine.node_parts import NodeBase
from dynamic_tools.engine.nodes.kind import (
    Kind,
    NodeAt,
    NodeChecks,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.state import RunFailed


class ErrorNode(NodeBase):
    """Fail the run with an interpolated message."""

    kind: Literal["error"] = Field(alias="type")
    message: str = "workflow failed"


class ErrorKind(Kind[ErrorNode]):
    """Fails the run with its message."""

    name = "error"
    model = ErrorNode
    written_as = "type: error"

    xml_tags = ("error",)
    no_arazzo_equivalent = (
        "an error node has no Arazzo equivalent: the step that leads "
        "to it fails instead, without its message"
    )
    arazzo_ends = True

    def reference_sources(self, node: ErrorNode, here: Path) -> list[ReferenceSource]:
        return [ReferenceSource(node.message, (*here, "message"))]

    def check_reach(self, node: ErrorNode, checks: NodeChecks) -> None:
        if not checks.graph.is_activated(checks.node_id) and not node.depends_on:
            checks.add(
                checks.here,
                "error_node_always_runs",
                f"error node '{checks.node_id}' is not activated by any branch or fallback "
                "and has no depends_on: it would fail every run",
            )
        else:
            super().check_reach(node, checks)

    async def execute(self, node: ErrorNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        message = run.render(node.message, at.scope, at.full_id)
        cause = at.scope.failure  # the failure that activated this node through a fallback
        context = (
            {"cause": {k: v for k, v in cause.items() if k != "body"}}
            if isinstance(cause, dict)
            else None
        )
        raise RunFailed(str(message), node_id=at.full_id, context=context)

    def label(self, node_id: str, node: ErrorNode) -> str:
        return f"fail ({node_id})"

    def details(self, node: ErrorNode) -> dict[str, Any]:
        return {"message": node.message}


KIND = ErrorKind()

__all__ = ["KIND", "ErrorKind", "ErrorNode"]
