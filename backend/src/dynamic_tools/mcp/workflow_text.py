"""Text and JSON views of workflows for MCP clients.

Design: docs/design-sources.md#tool-discovery-design (strategies 2 and 3).

- :func:`tool_description` — the ``w_<id>`` description block: the workflow's shape in text,
  where it pauses, its failure behaviour and its params;
- :func:`workflow_graph` — the structured JSON graph served as ``workflow://{domain}/{id}``;
- :func:`overview` — the natural-language guide served as ``workflow://{domain}/overview``;
- :func:`dependency_graph` — nodes and edges served as ``workflow://{domain}/graph``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from dynamic_tools.definitions.step_views import step_order
from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.nodes import kind_of, sub_workflows, tools_called
from dynamic_tools.tools.models import ToolConfig, ToolHints


def _label(node_id: str, node: Any) -> str:
    return kind_of(node).label(node_id, node)


def shape_lines(workflow: Workflow) -> list[str]:
    """The workflow's main path and its alternatives, one line each."""
    steps = step_order(workflow)
    graph = workflow.graph
    main = [s["node_id"] for s in steps if s["runs"] in ("always", "after dependencies")]
    lines = [" → ".join(_label(n, graph[n]) for n in main) or "(no unconditional steps)"]
    labels = {node_id: _label(node_id, node) for node_id, node in graph.items()}
    for node_id, node in graph.items():
        lines += kind_of(node).alternatives(node_id, node, labels)
    for step in steps:
        if step["runs"] == "when activated" and not any(
            a["via"].startswith("branch") for a in step["activated_by"]
        ):
            via = step["activated_by"][0] if step["activated_by"] else {}
            what = _label(step["node_id"], graph[step["node_id"]])
            lines.append(f"  ↘ on {via.get('when') or 'activation'}: {what}")
    return lines


def failure_lines(workflow: Workflow) -> list[str]:
    """How the workflow behaves on failure: retries, fallbacks, undo steps, timeouts."""
    lines: list[str] = []
    for node_id, node in workflow.graph.items():
        lines += kind_of(node).failure_notes(node_id, node, workflow.graph)
    if workflow.timeout:
        lines.append(f"whole workflow times out after {workflow.timeout}")
    return lines or ["a failing step fails the run (no retries configured)"]


def param_lines(workflow: Workflow) -> list[str]:
    """``name (type, required) — description e.g. example`` per param."""
    lines = []
    for name, spec in workflow.params.items():
        flags = [spec.type + (f":{spec.format}" if spec.format else "")]
        flags.append("required" if spec.required else "optional")
        text = f"{name} ({', '.join(flags)})"
        if spec.description:
            text += f" — {spec.description}"
        if spec.example is not None:
            text += f" e.g. {spec.example}"
        elif spec.default is not None:
            text += f", default {spec.default}"
        lines.append(text)
    return lines or ["(none)"]


def tool_description(workflow_id: str, workflow: Workflow, *, domain: str) -> str:
    """The ``w_<id>`` description block (docs/design-sources.md#tool-discovery-design)."""
    pauses = [
        pause
        for node_id, node in workflow.graph.items()
        if (pause := kind_of(node).pause(node_id, node)) is not None
    ]
    block = [f"┌─ Workflow: {workflow_id}", "│"]
    block += [f"│  {line}" for line in shape_lines(workflow)]
    block.append("│")
    if pauses:
        block.append("│  Pauses for input:")
        block += [f"│    {p}" for p in pauses]
    block.append("│  On failure:")
    block += [f"│    {line}" for line in failure_lines(workflow)]
    block.append("│  Params:")
    block += [f"│    {line}" for line in param_lines(workflow)]
    block.append(
        "└─ Runs deterministically on the server's engine (durable); one call does it all."
    )
    head = f"[{domain} workflow] {workflow.description or workflow_id}"
    return head + "\n\n" + "\n".join(block)


def workflow_graph(workflow_id: str, workflow: Workflow, *, domain: str) -> dict[str, Any]:
    """The structured JSON graph of a workflow (``workflow://{domain}/{id}``)."""
    return {
        "workflow": workflow_id,
        "tool": f"w_{workflow_id}",
        "domain": domain,
        "description": workflow.description,
        "params": {
            n: p.model_dump(mode="json", exclude_none=True) for n, p in workflow.params.items()
        },
        "steps": step_order(workflow),
        "outputs": workflow.outputs,
    }


def overview(
    domain: str,
    workflows: Mapping[str, Workflow],
    tools: Sequence[ToolConfig],
    hints: Mapping[str, ToolHints],
    *,
    served: Collection[str] | None = None,
    guide: str | None = None,
) -> str:
    """The natural-language guide of a domain: its workflows, the steps and the rules.

    Only tools that exist are named: a workflow in ``served`` is the tool ``w_<id>``, any
    other (a guide of X-Workflow-Resources) is marked as a guide. ``guide`` (the team's own
    markdown) comes first, the generated part after it.
    """
    by_name = {t.name: t for t in tools}
    lines = [guide.rstrip(), "", "---", ""] if guide else []
    if not workflows:
        return "\n".join(lines).rstrip() + "\n"
    lines += [f"# {domain} — Workflow Guide", "", "## Available Workflows", ""]
    for index, (workflow_id, workflow) in enumerate(workflows.items(), start=1):
        is_tool = served is None or workflow_id in served
        what = f"`w_{workflow_id}`" if is_tool else "a guide: no tool runs it"
        lines.append(f"### {index}. {workflow.description or workflow_id} ({what})")
        lines.append("Steps: " + shape_lines(workflow)[0])
        for line in shape_lines(workflow)[1:]:
            lines.append(f"- {line.strip()}")
        for tool_name in tools_called(workflow.graph.values()):
            tool = by_name.get(tool_name)
            if tool is not None:
                lines.append(f"- {tool_name}: {_first_sentence(tool.description)}")
        lines.append("")
    rules = []
    for tool in tools:
        h = hints.get(tool.name) or tool.hints
        for required in h.requires:
            rules.append(f"- Never call {tool.name} without {required} first.")
        if h.hint:
            rules.append(f"- {tool.name}: {h.hint}")
        if tool.effective_annotations.destructive and not tool.effective_annotations.read_only:
            rules.append(f"- {tool.name} changes or removes data; confirm with the user first.")
    if rules:
        lines += ["## Rules", *rules]
    return "\n".join(lines).rstrip() + "\n"


def dependency_graph(
    domain: str,
    workflows: Mapping[str, Workflow],
    served: Collection[str],
    hints: Mapping[str, ToolHints],
) -> dict[str, Any]:
    """The domain's dependency graph (``workflow://{domain}/graph``) as nodes and edges.

    Nodes: the workflows (``w_<id>`` when served, the bare id for a guide) and the tools they
    call. Edges: ``calls`` (workflow → tool), ``runs`` (workflow → sub-workflow), and the
    tools' hints ``next`` / ``requires`` (tool → tool) among those tools.
    """

    def workflow_node(workflow_id: str) -> str:
        return f"w_{workflow_id}" if workflow_id in served else workflow_id

    nodes: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, str]] = []
    for workflow_id, workflow in workflows.items():
        node = workflow_node(workflow_id)
        nodes[node] = {
            "id": node,
            "kind": "workflow" if workflow_id in served else "guide",
            "workflow": workflow_id,
            "description": workflow.description,
        }
        for tool in tools_called(workflow.graph.values()):
            nodes.setdefault(tool, {"id": tool, "kind": "tool"})
            edges.append({"from": node, "to": tool, "kind": "calls"})
        for sub in sorted(sub_workflows(workflow.graph.values())):
            edges.append({"from": node, "to": workflow_node(sub), "kind": "runs"})
    tools = [n for n, v in nodes.items() if v["kind"] == "tool"]
    for tool in tools:
        tool_hints = hints.get(tool)
        if tool_hints is None:
            continue
        for target in tool_hints.next:
            if target in nodes:
                edges.append({"from": tool, "to": target, "kind": "next"})
        for source in tool_hints.requires:
            if source in nodes:
                edges.append({"from": source, "to": tool, "kind": "requires"})
    return {"domain": domain, "nodes": list(nodes.values()), "edges": edges}


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]
