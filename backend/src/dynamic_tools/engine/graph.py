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

from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.nodes import kind_of
from dynamic_tools.engine.nodes.kind import Path
from dynamic_tools.engine.nodes.parallel import PARTIAL_FAILURE_KEYWORDS


class WorkflowGraph:
    """Derived facts about a workflow's graph (no validation: unknown names are ignored)."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.nodes = workflow.graph

    # --- activation ------------------------------------------------------------------------
    def activation_targets(self, node_id: str) -> list[tuple[Path, str]]:
        """Nodes that ``node_id`` can activate, with where in the node each is named."""
        node = self.nodes[node_id]
        return kind_of(node).activation_targets(node, self.nodes)

    @cached_property
    def activated(self) -> frozenset[str]:
        """Nodes that run only when activated."""
        names = {t for n in self.nodes for _, t in self.activation_targets(n)}
        names |= {n for n, node in self.nodes.items() if kind_of(node).only_when_activated}
        return frozenset(names & set(self.nodes))

    def is_activated(self, node_id: str) -> bool:
        """Whether ``node_id`` is a target of some activation."""
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

    def reachable_from(self, node_id: str) -> list[str]:
        """``node_id`` and the nodes that wait for it or that it activates, transitively.

        In graph order. A loop's goto back is not an edge: these are what a loop back to
        ``node_id`` runs again.
        """
        edges, seen, work = self.edges(), {node_id}, [node_id]
        while work:
            for nxt in edges.get(work.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    work.append(nxt)
        return [n for n in self.nodes if n in seen]

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
            for name, path in kind_of(node).outputs(node):
                yield node_id, name, (node_id, *path)

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
        if kind_of(node).may_be_skipped(node):
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
            return kind_of(node).only_when_activated and not self.is_activated(node_id)
        deps = [d for d in node.depends_on if d in self.nodes]
        return bool(deps) and all(self.unreachable(d, _seen | {node_id}) for d in deps)


__all__ = [
    "PARTIAL_FAILURE_KEYWORDS",
    "Path",
    "WorkflowGraph",
]
