"""What the workflow repository answers: typed views of workflows and of what it did.

The REST routes answer these models as they are; MCP tools and resources read their fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FileProblem",
    "Problem",
    "Renamed",
    "SavedDocument",
    "WorkflowDetail",
    "WorkflowSummary",
]


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


class WorkflowDetail(WorkflowSummary):
    """One workflow: its document's text, its parsed form and its violations."""

    content: str
    parsed: dict[str, Any]
    document_workflows: list[str] = Field(description="Every workflow of its document")
    violations: list[Problem]


class SavedDocument(BaseModel):
    """A document written: its file, format, new version, workflows and warnings."""

    file: str
    format: Literal["yaml", "json", "xml"]
    version: str
    workflows: list[str]
    violations: list[Problem]


class Renamed(BaseModel):
    """A workflow renamed, with the files whose references were updated."""

    id: str
    previous_id: str
    file: str
    version: str
    updated_files: list[str]
