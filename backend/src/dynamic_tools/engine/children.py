"""Children of a fan-out: what starts one (a spec) and what one hands back (a result).

A ``parallel`` branch or a ``foreach`` item runs as a child, through
:meth:`~dynamic_tools.engine.ports.StepRunner.gather`. A durable step runner starts each as a
child workflow and journals both the spec and the result, so both have a JSON form
(:meth:`ChildSpec.to_dict`, :meth:`ChildResult.to_dict`) that stays stable across versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.saga import Compensation
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import NodeState

__all__ = ["ChildResult", "ChildSpec"]


@dataclass(frozen=True)
class ChildSpec:
    """One child to run: which step of which node, with what scope, numbered how.

    ``id`` is the child's own id (``<run>/<node>/<branch or index>``); ``child_id`` the id of
    its node state (``<node>/<branch or index>``); ``prefix`` is put before the ids of the
    nodes it runs. ``seq_base`` is where its event numbers start: distinct per child and the
    same on every replay.
    """

    id: str
    child_id: str
    workflow_id: str
    node_id: str
    prefix: str
    scope: Scope
    seq_base: int
    branch: str | None = None
    iteration: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (what a durable runner passes to the child workflow)."""
        data: dict[str, Any] = {
            "child_id": self.child_id,
            "workflow_id": self.workflow_id,
            "node_id": self.node_id,
            "prefix": self.prefix,
            "scope": self.scope.to_dict(),
            "id": self.id,
            "seq_base": self.seq_base,
        }
        if self.branch is not None:
            data["branch"] = self.branch
        if self.iteration is not None:
            data["iteration"] = self.iteration
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChildSpec:
        """Inverse of :meth:`to_dict`."""
        return cls(
            id=str(data["id"]),
            child_id=str(data["child_id"]),
            workflow_id=str(data["workflow_id"]),
            node_id=str(data["node_id"]),
            prefix=str(data["prefix"]),
            scope=Scope.from_dict(data.get("scope") or {}),
            seq_base=int(data.get("seq_base") or 0),
            branch=data.get("branch"),
            iteration=data.get("iteration"),
        )


@dataclass(frozen=True)
class ChildResult:
    """What a child hands to its parent however it ended.

    Its value (None unless it succeeded), the compensations it registered and the states of
    the nodes it ran.
    """

    value: Any = None
    compensations: tuple[Compensation, ...] = ()
    nodes: dict[str, NodeState] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (journaled as the child workflow's result)."""
        return {
            "value": self.value,
            "compensations": [c.to_dict() for c in self.compensations],
            "nodes": {k: v.to_dict() for k, v in self.nodes.items()},
        }

    @classmethod
    def from_dict(cls, data: Any) -> ChildResult | None:
        """Inverse of :meth:`to_dict`; None for anything that is not a child's result."""
        if not isinstance(data, dict) or "value" not in data or "compensations" not in data:
            return None
        return cls(
            value=data["value"],
            compensations=tuple(Compensation.from_dict(c) for c in data["compensations"]),
            nodes={k: NodeState(**v) for k, v in (data.get("nodes") or {}).items()},
        )
