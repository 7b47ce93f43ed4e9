"""Response models of the workflow routes (``/workflows``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dynamic_tools.api.run_models import NodeView


class Problem(BaseModel):
    """A violation or a file problem: where and why (the validator's shape, and more)."""

    model_config = ConfigDict(extra="allow")

    message: str
    path: str | None = None
    rule: str | None = None
    line: int | None = None


class FileProblem(BaseModel):
    """A workflow file (or a workflow in it) that could not be loaded."""

    file: str
    rule: str
    message: str
    line: int | None = None
    violations: list[Problem] = Field(default_factory=list)


class WorkflowSummary(BaseModel):
    """A workflow in a list: where it lives, its params, whether it can run."""

    id: str
    title: str
    description: str
    domain: str
    file: str
    format: Literal["yaml", "json", "xml"]
    version: str = Field(description="The document's content version (for expected_version)")
    params: dict[str, dict[str, Any]]
    valid: bool
    errors: int = Field(description="How many errors its document has for it")


class WorkflowList(BaseModel):
    """Every workflow, and the problems of workflow files that did not load."""

    workflows: list[WorkflowSummary]
    problems: list[FileProblem]


class WorkflowDetail(WorkflowSummary):
    """One workflow: its document's text, its parsed form and its violations."""

    content: str
    parsed: dict[str, Any]
    document_workflows: list[str] = Field(description="Every workflow of its document")
    violations: list[Problem]


class ValidationResult(BaseModel):
    """Whether a document can be saved and run, and every violation."""

    valid: bool
    violations: list[Problem]


class SavedDocument(BaseModel):
    """A document written: its file, format, new version, workflows and warnings."""

    file: str
    format: Literal["yaml", "json", "xml"]
    version: str
    workflows: list[str]
    violations: list[Problem]


class WorkflowsReloaded(BaseModel):
    """The workflow ids after a reload, and the problems of files that did not load."""

    workflows: list[str]
    problems: list[FileProblem]


class Renamed(BaseModel):
    """A workflow renamed, with the files whose references were updated."""

    id: str
    previous_id: str
    file: str
    version: str
    updated_files: list[str]


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
