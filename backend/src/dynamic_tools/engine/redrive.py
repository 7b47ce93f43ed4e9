"""Redrive: run a failed (or cancelled) run again from where it stopped.

The new run executes the same workflow with the same params, but a top-level node that
succeeded in the earlier run is not executed again: its recorded output is taken as its
outcome (:meth:`Kind.reuse` writes what executing it would have written, a branch activates
what it chose, a yield keeps its answer). A node is reused when all of these hold:

- it succeeded in the earlier run;
- it is not a node that runs only when activated (a fallback target, a branch target: its
  activator decides again);
- the saga of the earlier run did not undo it (a compensated call runs again: what it did
  was undone);
- every node it depends on is reused too, or was skipped (what it read stays the same).

Everything else runs again, from the node that failed on. A reused call with
``compensate_with`` registers its compensation again, so the new run undoes it if it fails.
A redrive is refused (:class:`RedriveRefused`) when a node that would be reused cannot be: a
parallel, foreach or sub-workflow whose steps registered compensations (those are not
recorded per step, so they could not be registered again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.journal import NOT_JOURNALED
from dynamic_tools.engine.nodes import kind_of
from dynamic_tools.engine.plan import RunPlan
from dynamic_tools.engine.state import NodeState
from dynamic_tools.errors import ConflictError, ConflictKind


class RedriveRefused(ConflictError):
    """A node that succeeded cannot give its output to a redrive; ``node_id`` names it."""

    def __init__(self, message: str, node_id: str) -> None:
        super().__init__(
            message,
            kind=ConflictKind.REDRIVE_REFUSED,
            context={"node_id": node_id, "reason": "redrive_refused"},
        )
        self.node_id = node_id


@dataclass(frozen=True)
class Redrive:
    """What a redrive reuses: ``outputs`` by node id, and why each other node runs again.

    A durable run's argument (:func:`~dynamic_tools.engine.journal.to_json`); ``runs_again``
    is for the answer that starts the redrive only, not journaled.
    """

    from_run: str
    outputs: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    runs_again: dict[str, str] = field(default_factory=dict, metadata=NOT_JOURNALED)


def plan_redrive(plan: RunPlan, from_run: str, nodes: Mapping[str, NodeState]) -> Redrive:
    """Which top-level nodes reuse their output from ``nodes``, and which run again.

    ``nodes`` are the earlier run's node states; the nodes are those of ``plan``'s workflow.

    Raises:
        RedriveRefused: A node that would be reused cannot be (see the module).
    """
    root = plan.root
    reused: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    again: dict[str, str] = {}
    for node_id in root.order:
        node = root.workflow.graph[node_id]
        before = nodes.get(node_id)
        if before is None or before.status != "succeeded":
            status = before.status if before else "not run"
            again[node_id] = f"it was {status} in the earlier run"
            continue
        if node_id in root.activated:
            again[node_id] = "it runs only when activated: its activator decides again"
            continue
        undone = [c for c in before.detail.get("compensations", []) if c.get("ok")]
        if undone:
            again[node_id] = "the earlier run's compensation undid it"
            continue
        blocking = [d for d in node.depends_on if d not in reused and not _skipped(nodes.get(d))]
        if blocking:
            again[node_id] = f"it depends on {', '.join(blocking)}, which runs again"
            continue
        refusal = kind_of(node).reuse_refusal(node, plan)
        if refusal:
            raise RedriveRefused(
                f"node '{node_id}' succeeded but cannot be reused: {refusal}; start a new run "
                "instead",
                node_id=node_id,
            )
        reused[node_id] = before.output
        inputs[node_id] = before.input
    return Redrive(from_run=from_run, outputs=reused, inputs=inputs, runs_again=again)


def _skipped(node: NodeState | None) -> bool:
    return node is not None and node.status == "skipped"


__all__ = ["Redrive", "RedriveRefused", "plan_redrive"]
