"""Workflow documents: the model every format (YAML, JSON, XML) loads into.

A document (docs/design-sources.md#workflow-orchestration-plan) has a ``domain``, a
``version`` and ``workflows``; each workflow
has ``params``, a ``graph`` of named nodes and optional ``outputs`` and ``timeout``. A node's
kind is its ``type`` field, or ``call`` when it has ``call``, or ``workflow`` when it has
``workflow``; each kind is a module of :mod:`dynamic_tools.engine.nodes` (re-exported here).
Models are frozen: a run interprets a document, it never changes it.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from dynamic_tools.engine.node_parts import (
    IDENTIFIER,
    FrozenModel,
    OnError,
    ParamSpec,
    ParamType,
    Timed,
    Timeout,
    ToolStep,
    parse_duration,
)
from dynamic_tools.engine.nodes import (
    BranchCase,
    BranchNode,
    CallNode,
    CompensateNode,
    ErrorNode,
    ForeachNode,
    Node,
    ParallelNode,
    StepNode,
    WorkflowNode,
    YieldNode,
    node_with_kind,
)
from dynamic_tools.engine.triggers import Trigger, normalize_trigger, unique_names


class Workflow(Timed):
    """One workflow: parameters, a graph of named nodes, optional outputs."""

    description: str = ""
    params: dict[str, ParamSpec] = Field(default_factory=dict)
    graph: dict[str, Node] = Field(min_length=1)
    outputs: dict[str, Any] | None = None
    triggers: list[Trigger] = Field(
        default_factory=list,
        description="Schedules and webhooks that start runs of this workflow (docs/triggers.md)",
    )

    @field_validator("triggers", mode="before")
    @classmethod
    def _trigger_kinds(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [normalize_trigger(entry) for entry in value]
        return value

    @field_validator("triggers")
    @classmethod
    def _trigger_names(cls, value: list[Any]) -> list[Any]:
        return unique_names(value)

    @field_validator("graph", mode="before")
    @classmethod
    def _infer_kinds(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: node_with_kind(v) for k, v in value.items()}
        return value

    @field_validator("graph")
    @classmethod
    def _node_ids(cls, value: dict[str, Any]) -> dict[str, Any]:
        for node_id in value:
            if not re.match(IDENTIFIER, node_id):
                raise ValueError(f"node id '{node_id}' must match {IDENTIFIER}")
        return value

    @field_validator("params")
    @classmethod
    def _param_names(cls, value: dict[str, ParamSpec]) -> dict[str, ParamSpec]:
        for name in value:
            if not re.match(IDENTIFIER, name):
                raise ValueError(f"parameter name '{name}' must match {IDENTIFIER}")
        return value


class WorkflowDocument(FrozenModel):
    """A file of workflows for one domain."""

    domain: str = Field(default="default", min_length=1)
    version: str = "1.0"
    description: str | None = None
    base_url: str | None = Field(
        default=None,
        description="Base URL for the built-in rest_call (its args give method and path).",
        pattern=r"^https?://[^\s]+$",
    )
    workflows: dict[str, Workflow] = Field(min_length=1)

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("workflows")
    @classmethod
    def _workflow_ids(cls, value: dict[str, Workflow]) -> dict[str, Workflow]:
        for workflow_id in value:
            if not re.match(IDENTIFIER, workflow_id):
                raise ValueError(f"workflow id '{workflow_id}' must match {IDENTIFIER}")
        return value


__all__ = [
    "IDENTIFIER",
    "BranchCase",
    "BranchNode",
    "CallNode",
    "CompensateNode",
    "ErrorNode",
    "ForeachNode",
    "Node",
    "OnError",
    "ParallelNode",
    "ParamSpec",
    "ParamType",
    "StepNode",
    "Timeout",
    "ToolStep",
    "Workflow",
    "WorkflowDocument",
    "WorkflowNode",
    "YieldNode",
    "parse_duration",
]
