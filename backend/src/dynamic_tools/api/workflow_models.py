"""Response models of the workflow routes (``/workflows``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dynamic_tools.api.run_models import NodeView
from dynamic_tools.definitions.views import (
    FileProblem,
    InputParam,
    InputsPreview,
    Problem,
    StepOrder,
    WorkflowSummary,
)

__all__ = [
    "DryRunReport",
    "InputParam",
    "InputsPreview",
    "StepOrder",
    "ValidationResult",
    "WorkflowList",
    "WorkflowsReloaded",
]


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


class DryRunReport(BaseModel):
    """A run against mock answers: outcome, node states, the calls it made, its events."""

    status: str
    result: Any = None
    error: Any = None
    nodes: dict[str, NodeView]
    calls: list[dict[str, Any]]
    events: list[dict[str, Any]]
