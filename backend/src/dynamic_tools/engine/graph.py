"""The shape of one workflow's graph: dependencies, activations, outputs, skip analysis.

Semantics (README, "Workflows and runs"): a node named as a branch ``goto``/``default``, an
``on_error.fallback``
or an ``on_partial_failure`` target, and every compensate node, runs **only when activated**.
Every other node runs once all its ``depends_on`` are settled; a node whose dependencies were
all skipped is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from dynamic_tools.engine.models import (
    BranchNode,
    CallNode,
    CompensateNode,
    ForeachNode,
    ParallelNode,
    Workflow,
    WorkflowNode,
)

PARTIAL_FAILURE_KEYWORDS = frozenset({"abort", "continue", "rollback_all"})
Path = tuple[str | int, ...]


class WorkflowGraph:
    """Derived facts about a workflow's graph (no validation: unknown names are ignored)."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.nodes = workflow.graph

    # --- activation ------------------------------------------------------------------------
    def activation_targets(self, node_id: str) -> list[tuple[Path, str]]:
        """Nodes that ``node_id`` can activate, with where in the node each is named."""
        node = self.nodes[node_id]
        targets: list[tuple[Path, str]] = []
        if isinstance(node, BranchNode):
            targets += [(("on", i, "goto"), case.goto) for i, case in enumerate(node.on)]
            if node.default is not None:
                targets.append((("default",), node.default))
        if isinstance(node, CallNode | WorkflowNode) and node.on_error and node.on_error.fallback:
            targets.append((("on_error", "fallback"), node.on_error.fallback))
        if isinstance(node, ParallelNode):
            target = node.on_partial_failure
            if target not in PARTIAL_FAILURE_KEYWORDS or target in self.nodes:
                targets.append((("on_partial_failure",), target))
            for name, branch in node.branches.items():
                if branch.on_error and branch.on_error.fallback:
                    targets.append(
                        (("branches", name, "on_error", "fallback"), branch.on_error.fallback)
                    )
        if isinstance(node, ForeachNode) and node.step.on_error and node.step.on_error.fallback:
            targets.append((("step", "on_error", "fallback"), node.step.on_error.fallback))
        return targets

    @cached_property
    def activated(self) -> frozenset[str]:
        """Nodes that run only when activated."""
        names = {t for n in self.nodes for _, t in self.activation_targets(n)}
        names |= {n for n, node in self.nodes.items() if isinstance(node, CompensateNode)}
        return frozenset(names & set(self.nodes))

    def is_activated(self, node_id: str) -> bool:
        """Whether ``node_id`` is a target of some activation (or is a compensate node)."""
        return node_id in {t for n in self.nodes for _, t in self.activation_targets(n)}

    # --- cycles ----------------------------------------------------------------------------
    def edges(self) -> dict[str, list[str]]:
        """Node → nodes that wait for it or that it activates."""
        out: dict[str, list[str]] = {n: [] for n in self.nodes}
        for node_id, node in self.nodes.items():
            for dep in node.depends_on:
                if dep in out:
                    out[dep].append(node_id)
            out[node_id] += [t for _, t in self.activation_targets(node_id) if t in self.nodes]
        return out

    def cycles(self) -> list[list[str]]:
        """Each distinct cycle once, as ``[a, b, ..., a]``."""
        edges, found, seen_sets = self.edges(), [], set()
        state: dict[str, int] = {}
        stack: list[str] = []

        def visit(node: str) -> None:
            state[node] = 1
            stack.append(node)
            for nxt in edges[node]:
                if state.get(nxt) == 1:
                    cycle = [*stack[stack.index(nxt) :], nxt]
                    key = frozenset(cycle)
                    if key not in seen_sets:
                        seen_sets.add(key)
                        found.append(cycle)
                elif nxt not in state:
                    visit(nxt)
            stack.pop()
            state[node] = 2

        for node in self.nodes:
            if node not in state:
                visit(node)
        return found

    # --- outputs ---------------------------------------------------------------------------
    @staticmethod
    def outputs_of(workflow: Workflow) -> Iterator[tuple[str, str, Path]]:
        """``(producing node, output name, path)`` for every named output."""
        for node_id, node in workflow.graph.items():
            if isinstance(node, CallNode | WorkflowNode | ForeachNode) and node.output:
                yield node_id, node.output, (node_id, "output")
            if isinstance(node, ParallelNode):
                for name, branch in node.branches.items():
                    if branch.output:
                        yield node_id, branch.output, (node_id, "branches", name, "output")

    def outputs(self) -> Iterator[tuple[str, str, Path]]:
        """Named outputs of this workflow."""
        return self.outputs_of(self.workflow)

    def output_names(self) -> set[str]:
        """Every output name."""
        return {name for _, name, _ in self.outputs()}

    def producers(self, name: str) -> list[str]:
        """Nodes that write output ``name``."""
        return [node_id for node_id, output, _ in self.outputs() if output == name]

    # --- skipping --------------------------------------------------------------------------
    def may_be_skipped(self, node_id: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Whether a run can finish (or go on) without this node's output."""
        if node_id in _seen or node_id not in self.nodes:
            return False
        node = self.nodes[node_id]
        if node_id in self.activated:
            return True
        if isinstance(node, ParallelNode) and node.on_partial_failure == "continue":
            return True
        deps = [d for d in node.depends_on if d in self.nodes]
        return bool(deps) and all(self.may_be_skipped(d, _seen | {node_id}) for d in deps)

    def guarded_by(self, consumer: str, producer: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``consumer`` can only run after ``producer`` ran."""
        if consumer == producer:
            return True
        if consumer in _seen or consumer not in self.nodes or consumer in self.activated:
            return False
        deps = [d for d in self.nodes[consumer].depends_on if d in self.nodes]
        return bool(deps) and all(self.guarded_by(d, producer, _seen | {consumer}) for d in deps)

    def unreachable(self, node_id: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``node_id`` waits only on nodes that never run."""
        if node_id in _seen or node_id not in self.nodes:
            return False
        node = self.nodes[node_id]
        if node_id in self.activated:
            return isinstance(node, CompensateNode) and not self.is_activated(node_id)
        deps = [d for d in node.depends_on if d in self.nodes]
        return bool(deps) and all(self.unreachable(d, _seen | {node_id}) for d in deps)


__all__ = [
    "PARTIAL_FAILURE_KEYWORDS",
    "Path",
    "WorkflowGraph",
]
