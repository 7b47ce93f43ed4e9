"""Children of a fan-out: what starts one (a spec) and what one hands back (a result).

A ``parallel`` branch or a ``foreach`` item runs as a child, through
:meth:`~dynamic_tools.engine.ports.StepRunner.gather`. A durable step runner starts each as a
child workflow and journals both the spec and the result, so both have a JSON form
(:func:`~dynamic_tools.engine.journal.to_json`) that stays stable across versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.journal import OMIT_NONE, from_json
from dynamic_tools.engine.saga import Compensation
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import NodeState

__all__ = ["ChildResult", "ChildSpec", "child_result"]


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
    branch: str | None = field(default=None, metadata=OMIT_NONE)
    iteration: int | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class ChildResult:
    """What a child hands to its parent however it ended.

    Its value (None unless it succeeded), the compensations it registered and the states of
    the nodes it ran.
    """

    value: Any = None
    compensations: tuple[Compensation, ...] = ()
    nodes: dict[str, NodeState] = field(default_factory=dict)


def child_result(data: Any) -> ChildResult | None:
    """The :class:`ChildResult` journaled as ``data``; None for anything that is not one."""
    if not isinstance(data, dict) or "value" not in data or "compensations" not in data:
        return None
    return from_json(ChildResult, data)
