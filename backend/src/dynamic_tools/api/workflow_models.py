"""Response models of the workflow routes (``/workflows``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dynamic_tools.api.run_models import NodeView
from dynamic_tools.definitions.views import (
    FileProblem,
    Problem,
    WorkflowSummary,
)


class WorkflowList(BaseModel):
    """Every workflow, and the problems of workflow files that did not load."""

    workflows: list[WorkflowSummary]
    problems: list[FileProblem]


class ValidationResult(BaseModel):
    """Whether a document can be saved and run, and every violation."""

    valid: bool
    violations: list[Problem]


class WorkflowsReloaded(BaseModel):
    """The workflow ids after a reload, and the problems of files that did not load."""

    workflows: list[str]
    problems: list[FileProblem]


class StepOrder(BaseModel):
    """The nodes in the order the interpreter takes them, with how each gets to run."""

    workflow_id: str
    steps: list[dict[str, Any]]


class InputParam(BaseModel):
    """One parameter of a workflow, as a form would show it."""

    name: str
    type: str
    json_type: str | None
    required: bool
    default: Any = None
    example: Any = None
    description: str | None = None
    format: str | None = None
    enum: list[Any] | None = None


class InputsPreview(BaseModel):
    """The parameters, their JSON Schema and an example params object."""

    workflow_id: str
    params: list[InputParam]
    schema_: dict[str, Any] = Field(alias="schema", serialization_alias="schema")
    example: dict[str, Any]


class DryRunReport(BaseModel):
    """A run against mock answers: outcome, node states, the calls it made, its events."""

    status: str
    result: Any = None
    error: Any = None
    nodes: dict[str, NodeView]
    calls: list[dict[str, Any]]
    events: list[dict[str, Any]]
