"""What the two step kinds (``call``, ``workflow``) share: a step runs once and may retry.

A step is a node that can also stand inside a ``parallel`` branch or as a ``foreach`` step.
At the top level it runs as itself; its output is named by ``output`` and, when the workflow
has no ``outputs``, the last step that ran gives the workflow's result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from dynamic_tools.engine.node_parts import NodeBase, OnError
from dynamic_tools.engine.nodes.error import ErrorNode
from dynamic_tools.engine.nodes.kind import Kind, NodeAt, NodeChecks, NodeOutcome, Path, RunServices

if TYPE_CHECKING:
    from dynamic_tools.engine.plan import RunPlan

S = TypeVar("S", bound=NodeBase)


class StepKind(Kind[S]):
    """A kind whose nodes are steps (they have ``args``, ``output`` and ``on_error``)."""

    is_step: ClassVar[bool] = True

    def steps(self, node: S) -> list[tuple[Path, Any]]:
        return [((), node)]

    def check(self, node: S, checks: NodeChecks) -> None:
        self.check_step(node, checks, checks.here)

    async def execute(self, node: S, at: NodeAt, run: RunServices) -> NodeOutcome:
        output = await self.run_step(node, at.full_id, at.prefix, at.scope, run)
        at.scope.set_output(getattr(node, "output", None), output)
        return NodeOutcome(output=output, is_result=True)

    def reuse_refusal(self, node: S, plan: RunPlan) -> str | None:
        return None

    def reuse(self, node: S, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        at.scope.set_output(getattr(node, "output", None), output)
        return NodeOutcome(output=output, is_result=True)

    def failure_notes(self, node_id: str, node: S, nodes: Mapping[str, Any]) -> list[str]:
        on_error: OnError | None = getattr(node, "on_error", None)
        if on_error is None:
            return []
        text = f"{node_id}: retry {on_error.retry}x" if on_error.retry else f"{node_id}: no retry"
        if on_error.retry and on_error.backoff != "constant":
            text += f" ({on_error.backoff} backoff)"
        if on_error.fallback:
            target = nodes.get(on_error.fallback)
            if isinstance(target, ErrorNode):
                text += f', then fail with "{target.message}"'
            else:
                text += f", then {on_error.fallback}"
        return [text]

    def repeatable(self, node: S) -> bool:
        """Whether running the step again from its start is as good as replaying it.

        True for a step that makes one call (its attempts share one idempotency key): a
        durable fan-out of such steps may then run them side by side in its own workflow and
        journal only how each ended, instead of giving each its own child workflow.
        """
        return False

    def step_details(self, node: S) -> dict[str, Any]:
        """What the step does, as a branch or item of a fan-out shows it."""
        return {}

    def details(self, node: S) -> dict[str, Any]:
        return {**self.step_details(node), "timeout": node.timeout}


__all__ = ["StepKind"]
