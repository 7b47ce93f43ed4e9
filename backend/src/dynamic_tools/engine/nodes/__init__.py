"""Node kinds, one module each, and the registry that lists them.

Adding a node kind means writing one module here — its pydantic model and a
:class:`~dynamic_tools.engine.nodes.kind.Kind` with its graph facts, validation rules,
execution, views and Arazzo export (or why it has none) — and adding it to :data:`KINDS` (a
step kind, which a parallel branch or a foreach step may be, also to ``steps.py``'s
``STEP_KINDS``; this module refuses to load when it is missing there). A plug-in's or a
test's kind is registered with :func:`register` instead. Nothing else switches on a node's
kind: the graph, the validator, the interpreter, the step views, the MCP text, the
node-kind reference, the Arazzo exporter and the graph the UI draws (each node's ``kind``
and :meth:`~dynamic_tools.engine.nodes.kind.Kind.label`) all ask :func:`kind_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field

from dynamic_tools.engine.node_parts import NodeBase, with_kind
from dynamic_tools.engine.nodes import (
    branch,
    call,
    compensate,
    error,
    foreach,
    parallel,
    pause,
    workflow,
)
from dynamic_tools.engine.nodes.branch import BranchCase, BranchNode
from dynamic_tools.engine.nodes.call import CallNode
from dynamic_tools.engine.nodes.compensate import CompensateNode
from dynamic_tools.engine.nodes.error import ErrorNode
from dynamic_tools.engine.nodes.foreach import ForeachNode
from dynamic_tools.engine.nodes.kind import CallSite, Kind
from dynamic_tools.engine.nodes.parallel import ParallelNode
from dynamic_tools.engine.nodes.pause import YieldNode
from dynamic_tools.engine.nodes.steps import STEP_KINDS, StepNode
from dynamic_tools.engine.nodes.workflow import WorkflowNode

KINDS: tuple[Kind[Any], ...] = (
    call.KIND,
    workflow.KIND,
    branch.KIND,
    parallel.KIND,
    foreach.KIND,
    pause.KIND,
    compensate.KIND,
    error.KIND,
)
"""Every node kind, in the order the reference lists them."""

if {kind.name for kind in KINDS if kind.is_step} != {kind.name for kind in STEP_KINDS}:
    raise ImportError("engine/nodes/steps.py:STEP_KINDS must list every step kind of KINDS")


def node_union(*extra: type[NodeBase]) -> Any:
    """The union of the kinds' models (and ``extra`` models), told apart by ``type``."""
    models = (*(kind.model for kind in KINDS), *extra)
    return Annotated[Union[models], Field(discriminator="kind")]  # noqa: UP007


if TYPE_CHECKING:
    Node = NodeBase
else:
    Node = node_union()
"""A node of any kind (the models of :data:`KINDS`, told apart by ``type``)."""

KIND_NAMES = frozenset(kind.name for kind in KINDS)
_BY_MODEL: dict[type[NodeBase], Kind[Any]] = {kind.model: kind for kind in KINDS}
_SHORTHANDS = {kind.shorthand: kind.name for kind in KINDS if kind.shorthand}


def kind_of(node: NodeBase) -> Kind[Any]:
    """The kind of ``node``."""
    return _BY_MODEL[type(node)]


def register(kind: Kind[Any]) -> Callable[[], None]:
    """Make :func:`kind_of` know a kind outside :data:`KINDS` (a plug-in's, a test's).

    Returns the undo. A document holds such nodes only through a document model whose graph
    takes :func:`node_union` with the kind's model.
    """
    if kind.model in _BY_MODEL:
        raise ValueError(f"a kind for {kind.model.__name__} is registered already")
    _BY_MODEL[kind.model] = kind

    def undo() -> None:
        _BY_MODEL.pop(kind.model, None)

    return undo


def node_with_kind(value: Any) -> Any:
    """A node's mapping with ``type`` filled from its shape (``call:`` → ``call``)."""
    return with_kind(value, _SHORTHANDS)


def sub_workflows(nodes: Any) -> frozenset[str]:
    """Workflow ids the given nodes call as sub-workflows (branches and items included)."""
    return frozenset(
        step.workflow
        for node in nodes
        for _, step in kind_of(node).steps(node)
        if isinstance(step, WorkflowNode)
    )


def tools_called(nodes: Any) -> list[str]:
    """Every tool the given nodes may call, compensations included, first use first."""
    return list(dict.fromkeys(tool for node in nodes for tool in kind_of(node).tools(node)))


def calls_reached(workflow_id: str, workflows: Mapping[str, Any]) -> list[CallSite]:
    """Every tool call a workflow may make, its sub-workflows' (transitively) included.

    ``workflows`` maps the workflow ids a sub-workflow call may name to their workflows. A
    sub-workflow missing from it stays as its :class:`CallSite` (``workflow`` set): what it
    calls is unknown. Each workflow is walked once (a cycle ends).
    """
    found: list[CallSite] = []
    seen: set[str] = set()
    pending = [workflow_id]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        workflow = workflows.get(current)
        if workflow is None:
            found.append(CallSite(workflow=current))
            continue
        for node in workflow.graph.values():
            for site in kind_of(node).calls(node):
                if site.workflow is not None:
                    pending.append(site.workflow)
                else:
                    found.append(site)
    return found


__all__ = [
    "KINDS",
    "KIND_NAMES",
    "BranchCase",
    "BranchNode",
    "CallNode",
    "CallSite",
    "CompensateNode",
    "ErrorNode",
    "ForeachNode",
    "Kind",
    "Node",
    "ParallelNode",
    "StepNode",
    "WorkflowNode",
    "YieldNode",
    "calls_reached",
    "kind_of",
    "node_union",
    "node_with_kind",
    "register",
    "sub_workflows",
    "tools_called",
]
