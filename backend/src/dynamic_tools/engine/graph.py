"""The shape of one workflow's graph: dependencies, activations, outputs, skip analysis.

Semantics (README, "Workflows and runs"): a node named as a branch ``goto``/``default``, an
``on_error.fallback``
or an ``on_partial_failure`` target, and every compensate node, runs **only when activated**.
Every other node runs once all its ``depends_on`` are settled; a node whose dependencies were
all skipped is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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

    @cached_property
    def _targets(self) -> frozenset[str]:
        """Every node some activation names."""
        return frozenset(t for n in self.nodes for _, t in self.activation_targets(n))

    def is_activated(self, node_id: str) -> bool:
        """Whether ``node_id`` is a target of some activation."""
        return node_id in self._targets

    @cached_property
    def fallback_targets(self) -> frozenset[str]:
        """Nodes named as an ``on_error.fallback`` (where ``$error`` is set)."""
        return frozenset(
            target
            for node_id in self.nodes
            for where, target in self.activation_targets(node_id)
            if where[-1] == "fallback"
        )

    @cached_property
    def answering(self) -> frozenset[str]:
        """Nodes whose id reads as a name (a yield's answer: ``$<node id>.<field>``)."""
        return frozenset(
            n for n, node in self.nodes.items() if kind_of(node).answer_fields(node) is not None
        )

    # --- cycles ----------------------------------------------------------------------------
    @cached_property
    def _edges(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.nodes}
        for node_id, node in self.nodes.items():
            for dep in node.depends_on:
                if dep in out:
                    out[dep].append(node_id)
            out[node_id] += [t for _, t in self.activation_targets(node_id) if t in self.nodes]
        return out

    def edges(self) -> dict[str, list[str]]:
        """Node → nodes that wait for it or that it activates."""
        return {node: list(after) for node, after in self._edges.items()}

    def reachable_from(self, node_id: str) -> list[str]:
        """``node_id`` and the nodes that wait for it or that it activates, transitively.

        In graph order. A loop's goto back is not an edge: these are what a loop back to
        ``node_id`` runs again.
        """
        edges, seen, work = self._edges, {node_id}, [node_id]
        while work:
            for nxt in edges.get(work.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    work.append(nxt)
        return [n for n in self.nodes if n in seen]

    def cycles(self) -> list[list[str]]:
        """Each distinct cycle once, as ``[a, b, ..., a]``.

        A depth-first search with its own stack (a 5,000-node chain is 5,000 levels deep):
        each back edge closes a cycle.
        """
        edges = self._edges
        if not _has_cycle(edges):
            return []
        found: list[list[str]] = []
        seen_sets: set[frozenset[str]] = set()
        state: dict[str, int] = {}  # 1: on the current path, 2: done
        for root in self.nodes:
            if root in state:
                continue
            state[root] = 1
            path = [root]
            frames = [iter(edges[root])]
            while frames:
                nxt = next(frames[-1], None)
                if nxt is None:
                    frames.pop()
                    state[path.pop()] = 2
                elif state.get(nxt) == 1:
                    cycle = [*path[path.index(nxt) :], nxt]
                    key = frozenset(cycle)
                    if key not in seen_sets:
                        seen_sets.add(key)
                        found.append(cycle)
                elif nxt not in state:
                    state[nxt] = 1
                    path.append(nxt)
                    frames.append(iter(edges[nxt]))
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
        return set(self._producers)

    @cached_property
    def _producers(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for node_id, output, _ in self.outputs():
            found.setdefault(output, []).append(node_id)
        return found

    def producers(self, name: str) -> list[str]:
        """Nodes that write output ``name``."""
        return list(self._producers.get(name, ()))

    # --- skipping ---------------------------------------------------------------------------
    # Each fact below holds of a node by itself, or else when the node has dependencies and
    # the fact holds of all of them. They are computed by _over_dependencies with an explicit
    # stack and kept per graph: a long chain recursed once per node, and a ladder of diamonds
    # walked every path (2^n) when each question started afresh.
    @cached_property
    def _skippable(self) -> dict[str, bool]:
        return {}

    @cached_property
    def _unreached(self) -> dict[str, bool]:
        return {}

    @cached_property
    def _guards(self) -> dict[str, dict[str, bool]]:
        return {}

    def may_be_skipped(self, node_id: str) -> bool:
        """Whether a run can finish (or go on) without this node's output."""

        def itself(node_id: str) -> bool | None:
            if node_id not in self.nodes:
                return False
            if node_id in self.activated or kind_of(self.nodes[node_id]).may_be_skipped(
                self.nodes[node_id]
            ):
                return True
            return None

        return self._over_dependencies(node_id, itself, self._skippable)

    def guarded_by(self, consumer: str, producer: str) -> bool:
        """Whether ``consumer`` can only run after ``producer`` ran."""

        def itself(node_id: str) -> bool | None:
            if node_id == producer:
                return True
            if node_id not in self.nodes or node_id in self.activated:
                return False
            return None

        return self._over_dependencies(consumer, itself, self._guards.setdefault(producer, {}))

    def unreachable(self, node_id: str) -> bool:
        """Whether ``node_id`` waits only on nodes that never run."""

        def itself(node_id: str) -> bool | None:
            if node_id not in self.nodes:
                return False
            if node_id in self.activated:
                node = self.nodes[node_id]
                return kind_of(node).only_when_activated and not self.is_activated(node_id)
            return None

        return self._over_dependencies(node_id, itself, self._unreached)

    def _dependencies(self, node_id: str) -> list[str]:
        return [d for d in dict.fromkeys(self.nodes[node_id].depends_on) if d in self.nodes]

    def _over_dependencies(
        self, start: str, itself: Callable[[str], bool | None], known: dict[str, bool]
    ) -> bool:
        """``itself(node)`` when it says, else: the node has dependencies and all of them hold.

        ``known`` keeps the answers. A dependency met again on the path being followed (a
        cycle, which the validator reports) counts as not holding.
        """
        stack, on_path = [start], set()
        while stack:
            node_id = stack[-1]
            if node_id in known:
                stack.pop()
                continue
            if node_id not in on_path:
                decided = itself(node_id)
                if decided is not None:
                    known[node_id] = decided
                    stack.pop()
                    continue
                on_path.add(node_id)
                todo = [
                    d for d in self._dependencies(node_id) if d not in known and d not in on_path
                ]
                if todo:
                    stack.extend(reversed(todo))
                    continue
            deps = self._dependencies(node_id)
            known[node_id] = bool(deps) and all(known.get(d, False) for d in deps)
            on_path.discard(node_id)
            stack.pop()
        return known[start]


def _has_cycle(edges: Mapping[str, list[str]]) -> bool:
    """Whether ``edges`` has a cycle (Kahn's algorithm: some node never loses its last edge in)."""
    incoming = dict.fromkeys(edges, 0)
    for after in edges.values():
        for node in after:
            incoming[node] += 1
    ready = [node for node, count in incoming.items() if count == 0]
    removed = 0
    while ready:
        removed += 1
        for node in edges[ready.pop()]:
            incoming[node] -= 1
            if incoming[node] == 0:
                ready.append(node)
    return removed < len(edges)


__all__ = [
    "PARTIAL_FAILURE_KEYWORDS",
    "Path",
    "WorkflowGraph",
]
