"""Response models of the workflow routes (``/workflows``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from dynamic_tools.api.responses import Violation
from dynamic_tools.api.run_models import EngineEvent
from dynamic_tools.definitions.views import (
    DrawnNode,
    FileProblem,
    InputParam,
    InputsPreview,
    Problem,
    StepOrder,
    WorkflowSummary,
)
from dynamic_tools.engine.state import NodeState
from dynamic_tools.lazy_model import LazyModel

__all__ = [
    "ArazzoExportView",
    "DryRunCall",
    "DryRunReport",
    "InputParam",
    "InputsPreview",
    "StepOrder",
    "ValidationResult",
    "WorkflowList",
    "WorkflowsReloaded",
]


class WorkflowList(LazyModel):
    """Every workflow, and the problems of workflow files that did not load."""

    workflows: list[WorkflowSummary]
    problems: list[FileProblem]


class ValidationResult(LazyModel):
    """Whether a document can be saved and run, and every violation."""

    valid: bool
    violations: list[Problem]
    graphs: dict[str, list[DrawnNode]] = Field(
        description="Each workflow of the document as the UI draws it (none when it does not load)"
    )


class WorkflowsReloaded(LazyModel):
    """The workflow ids after a reload, and the problems of files that did not load."""

    workflows: list[str]
    problems: list[FileProblem]


class DryRunCall(LazyModel):
    """One call a dry run made (answered by a mock)."""

    tool: str
    args: dict[str, Any]
    idempotency_key: str


class DryRunReport(LazyModel):
    """A run against mock answers: outcome, node states, the calls it made, its events."""

    status: str
    result: Any = None
    error: Any = None
    nodes: dict[str, NodeState]
    calls: list[DryRunCall]
    events: list[EngineEvent] = Field(description="The events as the engine emitted them")


class ArazzoExportView(LazyModel):
    """A workflow as an Arazzo 1.0 document, with an OpenAPI 3.1 description of its tools."""

    workflow_id: str
    arazzo: dict[str, Any] = Field(description="The Arazzo document (its source is 'tools').")
    openapi: dict[str, Any] = Field(description="The OpenAPI description of the tools it calls.")
    openapi_file: str = Field(description="Where the Arazzo document expects the OpenAPI file.")
    warnings: list[Violation] = Field(
        description="What has no Arazzo or OpenAPI equivalent (parallel, foreach, yield, "
        "compensation, a ${VAR} base URL, a basic auth user name...), each with its path"
    )
