"""Graph operations on a plan's tools: prerequisites, cycles, order and independent chains."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Mapping
from itertools import pairwise

Edges = Mapping[tuple[str, str], list[str]]


def ancestors(name: str, edges: Iterable[tuple[str, str]], allowed: Collection[str]) -> set[str]:
    """Every tool with a path into ``name`` through tools in ``allowed``."""
    preds: dict[str, set[str]] = {}
    for a, b in edges:
        if a in allowed and b in allowed:
            preds.setdefault(b, set()).add(a)
    seen: set[str] = set()
    stack = [name]
    while stack:
        for parent in preds.get(stack.pop(), ()):
            if parent not in seen and parent != name:
                seen.add(parent)
                stack.append(parent)
    return seen


def break_cycles(
    nodes: list[str], edges: dict[tuple[str, str], list[str]], rank: Callable[[str], int]
) -> list[tuple[list[str], tuple[str, str]]]:
    """Remove edges until ``edges`` is acyclic; returns each cycle found and the edge dropped.

    The dropped edge is the one going furthest backwards in ``rank`` (the lifecycle stage),
    then the one with the fewest reasons, then the first by name.
    """
    broken: list[tuple[list[str], tuple[str, str]]] = []
    while True:
        cycle = _find_cycle(nodes, edges)
        if cycle is None:
            return broken
        pairs = list(pairwise(cycle))
        drop = min(pairs, key=lambda p: (rank(p[1]) - rank(p[0]), len(edges[p]), p))
        del edges[drop]
        broken.append((cycle, drop))


def _find_cycle(nodes: list[str], edges: Edges) -> list[str] | None:
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in sorted(edges):
        succ[a].append(b)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in succ[node]:
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(nodes):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def topological_order(
    nodes: list[str], edges: Edges, key: Callable[[str], tuple[int, str]]
) -> list[str]:
    """Kahn's algorithm; among ready tools the smallest ``key`` (stage, name) goes first."""
    indegree = {n: 0 for n in nodes}
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    ready = [(key(n), n) for n in nodes if indegree[n] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, node = heapq.heappop(ready)
        order.append(node)
        for nxt in succ[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, (key(nxt), nxt))
    return order


def independent_chains(order: list[str], edges: Edges) -> list[tuple[list[list[str]], str | None]]:
    """Groups of tools with no data or ordering dependency between them.

    Returns:
        ``(chains, join)`` pairs: the plan's weakly connected parts when there are several
        (``join`` None), and for each tool with predecessors whose ancestries are disjoint,
        those ancestries (``join`` is that tool). Chains list tools in plan order.
    """
    position = {n: i for i, n in enumerate(order)}
    found: list[tuple[list[list[str]], str | None]] = []
    parts = _components(order, edges)
    if len(parts) > 1:
        found.append(([sorted(p, key=position.__getitem__) for p in parts], None))
    for node in order:
        preds = sorted({a for a, b in edges if b == node}, key=position.__getitem__)
        groups: list[set[str]] = []
        for pred in preds:
            lineage = ancestors(pred, edges, position) | {pred}
            merged = [g for g in groups if g & lineage]
            for g in merged:
                groups.remove(g)
                lineage |= g
            groups.append(lineage)
        if len(groups) > 1:
            chains = [sorted(g, key=position.__getitem__) for g in groups]
            found.append((sorted(chains, key=lambda c: position[c[0]]), node))
    return found


def _components(nodes: list[str], edges: Edges) -> list[set[str]]:
    parent = {n: n for n in nodes}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        parent[root(a)] = root(b)
    groups: dict[str, set[str]] = {}
    for n in nodes:
        groups.setdefault(root(n), set()).add(n)
    return list(groups.values())
