"""One of our workflows → an Arazzo 1.0 document and an OpenAPI 3.1 description of its tools.

The workflow and the sub-workflows it calls become Arazzo workflows; their nodes become steps
in the order the engine takes them. Each node kind writes its own nodes
(:meth:`~dynamic_tools.engine.nodes.kind.Kind.arazzo_step`, in ``engine/nodes/``) or declares
why they have no Arazzo equivalent; this module offers them the rewriting of values:

- a call of a registered tool is an ``operationId`` step (the operation is the tool, in the
  OpenAPI description written beside it); its args are parameters (by the tool's ``in``) and
  a ``requestBody`` payload; its criteria ``successCriteria``; its named ``outputs`` the
  step's outputs, else the body as output ``body``;
- a sub-workflow is a ``workflowId`` step;
- a branch is the ``onSuccess`` actions of the step it follows (``goto``, ``end``, with
  ``max_loops`` a goto back); a branch target is followed by a goto to what waits for it
  (or an end), since Arazzo steps run in sequence;
- ``on_error`` is ``onFailure``: a ``retry`` (``retryAfter`` the delay, ``retryLimit`` the
  retries) and a ``goto`` to the fallback.

What has no Arazzo equivalent is listed in ``warnings``, never dropped silently: parallel and
foreach nodes, yields, compensation (``compensate_with``, compensate nodes), error nodes
(the step fails instead, without the message), calls of ``rest_call`` and ``sql_query``.
The OpenAPI description (:mod:`~dynamic_tools.definitions.arazzo.export_openapi`) keeps the
tools' servers, auth (as security schemes naming the same tool secrets) and static params (as
constant parameters, which the steps pass); what it cannot say is a warning too.
References are rewritten (``$param`` → ``$inputs.param``, ``$out.a`` →
``$steps.<node>.outputs.body#/a``, ``"text $x"`` → ``"text {$inputs.x}"``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.definitions.arazzo.export_openapi import openapi_of, static_values
from dynamic_tools.engine.graph import WorkflowGraph
from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.node_parts import OnError
from dynamic_tools.engine.nodes import kind_of
from dynamic_tools.engine.params import JSON_TYPES
from dynamic_tools.engine.references import REFERENCE_PATTERN
from dynamic_tools.tools.models import ToolConfig

OPENAPI_FILE = "tools.openapi.yaml"
"""The file name an export's Arazzo document gives its OpenAPI description."""

_ANSWER = {"result": "$response.body", "status": "$statusCode", "headers": "$response.header"}
_BUILTIN_TOOLS = frozenset({"rest_call", "sql_query"})
"""Tools of the engine itself: no operation of an OpenAPI description."""


@dataclass
class ArazzoExport:
    """An Arazzo document, the OpenAPI description of its operations, and what was left out."""

    arazzo: dict[str, Any]
    openapi: dict[str, Any]
    warnings: list[dict[str, Any]] = field(default_factory=list)


def export_arazzo(
    workflow_id: str,
    workflows: Mapping[str, Workflow],
    tool: Callable[[str], ToolConfig | None],
    *,
    title: str | None = None,
    source_url: str = f"./{OPENAPI_FILE}",
    source: Callable[[str], ToolConfig | None] | None = None,
) -> ArazzoExport:
    """Export ``workflow_id`` (and the sub-workflows it reaches) of ``workflows``.

    ``tool`` gives a registered tool (its base URL resolved); ``source`` the same tool as
    written in its file, to warn when its base URL had ``${VAR}``s.
    """
    order: list[str] = []
    pending = [workflow_id]
    while pending:
        current = pending.pop(0)
        if current in order or current not in workflows:
            continue
        order.append(current)
        pending += [
            step.workflow
            for node in workflows[current].graph.values()
            for _, step in kind_of(node).steps(node)
            if getattr(step, "workflow", None)
        ]
    export = ArazzoExport(arazzo={}, openapi={})
    used: dict[str, ToolConfig] = {}
    arazzo_workflows = [
        _WorkflowExport(wid, workflows[wid], tool, used, export.warnings).build() for wid in order
    ]
    export.arazzo = {
        "arazzo": "1.0.1",
        "info": {"title": title or workflow_id, "version": "1.0.0"},
        "sourceDescriptions": [{"name": "tools", "url": source_url, "type": "openapi"}],
        "workflows": arazzo_workflows,
    }

    def warn(path: str, rule: str, message: str) -> None:
        export.warnings.append({"path": path, "rule": rule, "message": message})

    export.openapi = openapi_of(used.values(), title or workflow_id, warn, source)
    return export


class _WorkflowExport:
    def __init__(
        self,
        workflow_id: str,
        workflow: Workflow,
        tool: Callable[[str], ToolConfig | None],
        used: dict[str, ToolConfig],
        warnings: list[dict[str, Any]],
    ) -> None:
        self.workflow_id = workflow_id
        self.workflow = workflow
        self.tool = tool
        self.used = used
        self.warnings = warnings
        self.graph = WorkflowGraph(workflow)
        self.by_node: dict[str, dict[str, Any]] = {}  # node → its step
        self.producers: dict[str, tuple[str, bool]] = {}  # output → (node, has named outputs)
        for node_id, node in workflow.graph.items():
            output = getattr(node, "output", None)
            if output:
                self.producers[output] = (node_id, bool(getattr(node, "outputs", None)))

    def warn(self, node_id: str | None, message: str) -> None:
        where = f"workflows.{self.workflow_id}" + (f".graph.{node_id}" if node_id else "")
        self.warnings.append({"path": where, "rule": "no_arazzo_equivalent", "message": message})

    def build(self) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        by_node = self.by_node
        for node_id, node in self.workflow.graph.items():
            step = kind_of(node).arazzo_step(node_id, node, self)
            if step is not None and step.get("operationId") in self.used:
                _send_static_params(step, self.used[step["operationId"]])
            if step is not None:
                steps.append(step)
                by_node[node_id] = step
        for node_id, node in self.workflow.graph.items():
            kind_of(node).arazzo_actions(node_id, node, self)
        self._close_targets(steps, by_node)
        out: dict[str, Any] = {"workflowId": self.workflow_id}
        if self.workflow.description:
            out["description"] = self.workflow.description
        if self.workflow.params:
            properties = {}
            for name, spec in self.workflow.params.items():
                prop: dict[str, Any] = {}
                if spec.type in JSON_TYPES:
                    prop["type"] = JSON_TYPES[spec.type]
                for key in ("description", "format", "enum", "default"):
                    if getattr(spec, key) is not None:
                        prop[key] = getattr(spec, key)
                properties[name] = prop
            required = [n for n, s in self.workflow.params.items() if s.required]
            out["inputs"] = {"type": "object", "properties": properties}
            if required:
                out["inputs"]["required"] = required
        out["steps"] = steps
        if isinstance(self.workflow.outputs, dict):
            out["outputs"] = {
                _output_key(k): self.value(v, None) for k, v in self.workflow.outputs.items()
            }
        if not steps:
            self.warn(None, "no step of this workflow has an Arazzo equivalent")
        if self.workflow.triggers:
            names = ", ".join(f"{t.kind} '{t.name}'" for t in self.workflow.triggers)
            self.warn(
                None,
                f"its triggers ({names}) have no Arazzo equivalent: what starts the exported "
                "workflow is its runner's to decide",
            )
        return out

    # --- what the node kinds ask (engine/nodes/kind.py:ArazzoSteps) ----------------------
    def operation(self, tool: str) -> _Operation | None:
        config = self.tool(tool)
        if config is None or tool in _BUILTIN_TOOLS:
            return None
        self.used[config.name] = config
        return _Operation(config)

    def step(self, node_id: str) -> dict[str, Any] | None:
        return self.by_node.get(node_id)

    def goto(self, node_id: str) -> dict[str, Any]:
        target = self.workflow.graph.get(node_id)
        if target is not None and kind_of(target).arazzo_ends:
            return {"type": "end"}
        return {"type": "goto", "stepId": node_id}

    def on_error(self, step: dict[str, Any], node_id: str, on_error: OnError | None) -> None:
        if on_error is None:
            return
        actions: list[dict[str, Any]] = []
        if on_error.retry:
            action: dict[str, Any] = {
                "name": "retry",
                "type": "retry",
                "stepId": node_id,
                "retryAfter": on_error.delay / 1000,
                "retryLimit": on_error.retry,
            }
            criteria = _retry_criteria(on_error.retry_on)
            if on_error.retry_if:
                criteria.append(self.condition(on_error.retry_if, node_id))
            if criteria:
                action["criteria"] = [{"condition": c} for c in criteria]
            if {"transport", "timeout"} & set(on_error.retry_on) and criteria:
                self.warn(
                    node_id,
                    "a retry on transport failures or timeouts has no Arazzo "
                    "criterion (no status code): they are not retried",
                )
            actions.append(action)
            if on_error.backoff != "constant" or on_error.jitter:
                self.warn(
                    node_id, f"{on_error.backoff} backoff and jitter become a constant retryAfter"
                )
        if on_error.fallback:
            goto = self.goto(on_error.fallback)
            actions.append({"name": "fail" if goto["type"] == "end" else "fallback", **goto})
        if actions:
            step["onFailure"] = actions

    def _close_targets(self, steps: list[dict[str, Any]], by_node: dict[str, Any]) -> None:
        """After a branch target, go on where its path goes on (Arazzo runs steps in order)."""
        order = [s["stepId"] for s in steps]
        for index, step_id in enumerate(order):
            if step_id not in self.graph.activated or "onSuccess" in by_node[step_id]:
                continue
            joins = [
                n
                for n, node in self.workflow.graph.items()
                if step_id in node.depends_on and n in by_node
            ]
            following = order[index + 1] if index + 1 < len(order) else None
            if joins and joins[0] == following:
                continue
            action = (
                {"name": "continue", "type": "goto", "stepId": joins[0]}
                if joins
                else {"name": "done", "type": "end"}
            )
            by_node[step_id]["onSuccess"] = [action]

    # --- values ----------------------------------------------------------------------------
    def value(
        self, value: Any, node_id: str | None, answer: Mapping[str, str] | None = None
    ) -> Any:
        if isinstance(value, dict):
            return {k: self.value(v, node_id, answer) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, node_id, answer) for v in value]
        if not isinstance(value, str):
            return value
        whole = REFERENCE_PATTERN.fullmatch(value)
        if whole:
            return self._reference(whole, node_id, answer)
        out, position = [], 0
        for match in REFERENCE_PATTERN.finditer(value):
            if match.start() > 0 and value[match.start() - 1] == "$":
                continue
            out.append(value[position : match.start()])
            out.append("{" + self._reference(match, node_id, answer) + "}")
            position = match.end()
        out.append(value[position:])
        return "".join(out).replace("$$", "$")

    def condition(self, text: str, node_id: str) -> str:
        def rewrite(match: re.Match[str]) -> str:
            return self._reference(match, node_id, _ANSWER)

        converted = REFERENCE_PATTERN.sub(rewrite, text)
        if re.search(r"\b[a-z_]+\(", converted):
            self.warn(node_id, f"'{text}' calls functions, which Arazzo conditions do not have")
        return converted.replace(" and ", " && ").replace(" or ", " || ")

    def _reference(
        self, match: re.Match[str], node_id: str | None, answer: Mapping[str, str] | None
    ) -> str:
        name, dotted = match.group(1), match.group(2)
        path = [p for p in dotted.split(".") if p]
        if answer and name in answer:
            base = answer[name]
            if name == "headers" and path:
                return f"{base}.{path[0].replace('_', '-')}"
            if name == "result" and base == "$response.body":
                return base + ("#/" + "/".join(path) if path else "")
            return base + ("." + ".".join(path) if path else "")
        if name in self.workflow.params:
            return f"$inputs.{name}" + ("#/" + "/".join(path) if path else "")
        if name in self.producers:
            producer, named = self.producers[name]
            if named and path:
                rest = "#/" + "/".join(path[1:]) if len(path) > 1 else ""
                return f"$steps.{producer}.outputs.{path[0]}{rest}"
            return f"$steps.{producer}.outputs.body" + ("#/" + "/".join(path) if path else "")
        if name == "error":
            return "$response.body"
        self.warn(node_id, f"'{match.group(0)}' names nothing Arazzo can read")
        return match.group(0)


@dataclass(frozen=True)
class _Operation:
    """A registered tool as an Arazzo operation."""

    config: ToolConfig

    @property
    def operation_id(self) -> str:
        return self.config.name

    def param_in(self, name: str) -> str | None:
        param = self.config.parameters.get(name)
        return param.location if param is not None else None

    @property
    def content_type(self) -> str:
        return self.config.api.content_type


def _send_static_params(step: dict[str, Any], config: ToolConfig) -> None:
    """Pass the tool's static params, which the exported operation takes as parameters."""
    parameters, payload = static_values(config)
    if parameters:
        step["parameters"] = [*parameters, *step.get("parameters", [])]
    if payload:
        body = step.setdefault(
            "requestBody", {"contentType": config.api.content_type, "payload": {}}
        )
        body["payload"] = {**payload, **body.get("payload", {})}


def _retry_criteria(retry_on: list[str]) -> list[str]:
    """One condition for the statuses ``retry_on`` retries ([] when it retries everything)."""
    kinds = set(retry_on)
    if {"4xx", "5xx", "429", "criteria"} <= kinds:
        return []
    parts = []
    if "5xx" in kinds:
        parts.append("$statusCode >= 500")
    if "4xx" in kinds:
        parts.append("($statusCode >= 400 && $statusCode < 500)")
    if "429" in kinds and "4xx" not in kinds:
        parts.append("$statusCode == 429")
    parts += [f"$statusCode == {k}" for k in sorted(kinds) if k.isdigit() and k != "429"]
    return [" || ".join(parts)] if parts else []


def _output_key(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._\-]", "_", key) or "_"


__all__ = ["OPENAPI_FILE", "ArazzoExport", "export_arazzo", "openapi_of"]
