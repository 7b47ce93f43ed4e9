"""Read-only views of one workflow: its step plan and a preview of its inputs.

The step plan lists nodes in the order the interpreter takes them: it repeatedly runs the first
node, in document order, whose dependencies are settled, and a node that runs only when
activated (a branch ``goto``/``default``, a fallback, an ``on_partial_failure`` target, a
compensate node) comes after the node that can activate it. Each step says why it runs
(``always``, ``after dependencies``, ``when activated`` or ``on failure``) and by whom and on
what condition it can be activated.

Failure paths read where they happen: a node that only a failure activates (a fallback
target, an ``on_partial_failure`` target) and every compensate node is listed right after the
node whose failure activates it, with ``runs: "on failure"`` and ``on_failure: true``, not
after the nodes of the success path that come before it in the document. A call with
``compensate_with`` carries a ``compensation`` entry saying what undoes it and when (the saga
runs those newest first, at the end, if the run fails, times out or is cancelled).
"""

from __future__ import annotations

import itertools
from typing import Any

from dynamic_tools.engine.graph import Path, WorkflowGraph
from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.nodes import kind_of
from dynamic_tools.engine.params import JSON_TYPES, params_schema


def _activation(graph: WorkflowGraph, source: str, path: Path) -> dict[str, Any]:
    """How ``source`` activates a node, from where the target is named in it."""
    node = graph.nodes[source]
    return {"node": source, **kind_of(node).activation(node, path)}


FAILURE_PATHS = frozenset({"fallback", "on_partial_failure"})


def step_order(workflow: Workflow) -> list[dict[str, Any]]:
    """The plan of ``workflow``: one entry per node, in the order they would run."""
    graph = WorkflowGraph(workflow)
    activators: dict[str, list[dict[str, Any]]] = {}
    for source in graph.nodes:
        for path, target in graph.activation_targets(source):
            activators.setdefault(target, []).append(_activation(graph, source, path))
    on_failure = {
        node_id
        for node_id in graph.activated
        if kind_of(graph.nodes[node_id]).only_when_activated
        or (activators.get(node_id) and all(a["via"] in FAILURE_PATHS for a in activators[node_id]))
    }
    order: list[str] = []
    placed: set[str] = set()

    def can_run(node_id: str) -> bool:
        node = graph.nodes[node_id]
        return (
            node_id not in placed
            and all(d in placed for d in node.depends_on if d in graph.nodes)
            and (
                node_id not in graph.activated
                or any(a["node"] in placed for a in activators.get(node_id, []))
            )
        )

    def place(node_id: str) -> None:
        """Place ``node_id``, then its failure paths right after it (depth first, a stack)."""
        order.append(node_id)
        placed.add(node_id)
        stack = [iter(graph.activation_targets(node_id))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                continue
            target = step[1]
            if target in on_failure and target in graph.nodes and can_run(target):
                order.append(target)
                placed.add(target)
                stack.append(iter(graph.activation_targets(target)))

    nodes = list(graph.nodes)
    first = 0  # nodes before it are placed: a long chain is not scanned once per node
    while True:
        while first < len(nodes) and nodes[first] in placed:
            first += 1
        ready = next((n for n in itertools.islice(nodes, first, None) if can_run(n)), None)
        if ready is None:
            break
        place(ready)
    never = [n for n in graph.nodes if n not in placed]
    steps = []
    for index, node_id in enumerate([*order, *never], start=1):
        node = graph.nodes[node_id]
        if node_id in never:
            runs = "never"
        elif node_id in on_failure:
            runs = "on failure"
        elif node_id in graph.activated:
            runs = "when activated"
        else:
            runs = "after dependencies" if node.depends_on else "always"
        steps.append(
            {
                "order": index,
                "node_id": node_id,
                "kind": kind_of(node).name,
                "description": node.description,
                "depends_on": list(node.depends_on),
                "runs": runs,
                "on_failure": node_id in on_failure,
                "activated_by": activators.get(node_id, []),
                **kind_of(node).details(node),
            }
        )
    return steps


def drawn_graph(workflow: Workflow) -> list[dict[str, Any]]:
    """The nodes of ``workflow`` as the UI draws them: kind, label, what each hands over to.

    Everything comes from the node's kind, so a kind the UI has never heard of is drawn too.
    """
    graph = WorkflowGraph(workflow)
    drawn = []
    for node_id, node in graph.nodes.items():
        kind = kind_of(node)
        activates = [
            {"target": target, **_edge(kind.activation(node, path))}
            for path, target in graph.activation_targets(node_id)
        ]
        activates += [
            {"target": target, "via": "loop", "when": kind.activation(node, path).get("when")}
            for path, target, _bound in kind.loop_targets(node)
        ]
        drawn.append(
            {
                "id": node_id,
                "kind": kind.name,
                "label": kind.label(node_id, node),
                "depends_on": list(node.depends_on),
                "activates": activates,
            }
        )
    return drawn


def _edge(activation: dict[str, Any]) -> dict[str, Any]:
    return {"via": activation["via"], "when": activation.get("when")}


def preview_inputs(workflow: Workflow) -> dict[str, Any]:
    """The parameters, their JSON Schema and an example params object.

    Each parameter has type, JSON type, required, default, example, description, format and
    enum; the example object takes each example, else the default.
    """
    params = [
        {
            "name": name,
            "type": spec.type,
            "json_type": JSON_TYPES.get(spec.type),
            "required": spec.required,
            "default": spec.default,
            "example": spec.example,
            "description": spec.description,
            "format": spec.format,
            "enum": spec.enum,
        }
        for name, spec in workflow.params.items()
    ]
    schema = params_schema(workflow.params)
    example = {
        p["name"]: p["example"] if p["example"] is not None else p["default"]
        for p in params
        if p["example"] is not None or p["default"] is not None
    }
    return {"params": params, "schema": schema, "example": example}
