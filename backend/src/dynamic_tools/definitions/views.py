"""What the workflow repository answers: typed views of workflows and of what it did.

The REST routes answer these models as they are; MCP tools and resources read their fields.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from dynamic_tools.engine.node_parts import ParamView
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import Sparse
from dynamic_tools.tools.catalog_views import ProviderContractView
from dynamic_tools.violations import Problem

__all__ = [
    "Deleted",
    "DrawnEdge",
    "DrawnNode",
    "FileProblem",
    "InputOutcome",
    "InputParam",
    "InputResolution",
    "InputsPreview",
    "Problem",
    "Purged",
    "Renamed",
    "RenderedPreview",
    "RenderedStep",
    "SavedDocument",
    "StepOrder",
    "WorkflowDetail",
    "WorkflowSummary",
]


class FileProblem(LazyModel):
    """A workflow file (or a workflow in it) that could not be loaded."""

    file: str
    rule: str
    message: str
    line: int | None = None
    violations: list[Problem] = Field(default_factory=list)


class WorkflowSummary(LazyModel):
    """A workflow in a list: where it lives, its params, whether it can run."""

    id: str
    title: str
    description: str
    domain: str
    file: str
    format: Literal["yaml", "json", "xml"]
    version: str = Field(description="The document's content version (for expected_version)")
    params: dict[str, ParamView] = Field(description="Each param's spec, its keys that are set")
    valid: bool
    errors: int = Field(description="How many errors its document has for it")
    schedules: list[str] = Field(
        default_factory=list, description="The names of its schedules (docs/triggers.md)"
    )
    webhooks: list[str] = Field(
        default_factory=list, description="The names of its webhooks (docs/triggers.md)"
    )


class DrawnEdge(LazyModel):
    """A node that a node can hand over to, and how."""

    target: str
    via: str = Field(
        description="branch, branch_default, loop (a branch's goto back), fallback, "
        "on_partial_failure"
    )
    when: str | None = Field(default=None, description="The condition, when there is one")


class DrawnNode(LazyModel):
    """One node of a workflow's graph as the UI draws it (kind and label from its node kind)."""

    id: str
    kind: str = Field(description="The node's kind (its `type`)")
    label: str = Field(description="A few words for the node, from its kind")
    depends_on: list[str]
    activates: list[DrawnEdge] = Field(description="The nodes it can hand over to")


class WorkflowDetail(WorkflowSummary):
    """One workflow: its document's text, its parsed form, its graph as drawn, its violations."""

    content: str
    parsed: dict[str, Any]
    nodes: list[DrawnNode] = Field(description="Its graph's nodes in document order, as drawn")
    document_workflows: list[str] = Field(description="Every workflow of its document")
    violations: list[Problem]


class SavedDocument(LazyModel):
    """A document written: its file, format, new version, workflows and warnings."""

    file: str
    format: Literal["yaml", "json", "xml"]
    version: str
    workflows: list[str]
    violations: list[Problem]


class Renamed(LazyModel):
    """A workflow renamed, with the files whose references were updated."""

    id: str
    previous_id: str
    file: str
    version: str
    updated_files: list[str]


class Deleted(LazyModel):
    """A workflow removed from its document (the file too when it held only this one)."""

    id: str
    file: str
    file_removed: bool


class StepOrder(LazyModel):
    """The nodes in the order the interpreter takes them, with how each gets to run."""

    workflow_id: str
    steps: list[dict[str, Any]]


class InputParam(LazyModel):
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


class InputsPreview(LazyModel):
    """The parameters, their JSON Schema and an example params object."""

    model_config = ConfigDict(populate_by_name=True)

    workflow_id: str
    params: list[InputParam]
    schema_: dict[str, Any] = Field(alias="schema", serialization_alias="schema")
    example: dict[str, Any]


class RenderedStep(Sparse):
    """A step with its arguments rendered where the inputs allow it.

    ``tool``, ``args`` and ``pending`` only for a step that calls a tool.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset({"tool", "args", "pending"})

    node_id: str
    kind: str
    runs: Any = Field(description="When the node runs (always, after, when activated)")
    tool: str | None = Field(default=None, description="The tool it calls")
    args: dict[str, Any] | None = Field(
        default=None, description="Its arguments, rendered where the inputs allow it"
    )
    pending: list[dict[str, str]] | None = Field(
        default=None, description="The arguments that need an earlier step's output"
    )


class RenderedPreview(LazyModel):
    """Each step rendered from the inputs; what needs earlier outputs stays pending."""

    workflow_id: str
    inputs: dict[str, Any]
    violations: list[Problem]
    steps: list[RenderedStep]


class InputOutcome(Sparse):
    """What became of one input, and the providers that can supply it.

    ``resolved`` (from the input or its default), ``prompt`` (missing and required: ask the
    user), ``optional`` (missing, not required) or ``error`` (given but invalid).
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset({"source", "providers"})

    outcome: Literal["resolved", "prompt", "optional", "error"]
    source: Literal["input", "default"] | None = Field(
        default=None, description="Where a resolved input's value comes from"
    )
    providers: list[ProviderContractView] | None = Field(
        default=None, description="The tools that can supply a missing or invalid input"
    )


class InputResolution(LazyModel):
    """Which inputs are given, which have defaults, which a provider or the user must give."""

    workflow_id: str
    ready: bool
    resolved: dict[str, Any]
    defaults: dict[str, Any]
    inputs: dict[str, InputOutcome] = Field(description="Each param's outcome")
    violations: list[Problem]
    unknown_inputs: list[str]


class Purged(Sparse):
    """What a history purge removed (or would remove: a dry run), and how many per workflow."""

    SPARSE: ClassVar[frozenset[str]] = frozenset({"removed_runs", "would_remove_runs"})

    workflow_id: str | None = None
    removed_runs: int | None = Field(default=None, description="How many runs were removed")
    would_remove_runs: int | None = Field(
        default=None, description="A dry run: how many runs would be removed"
    )
    by_workflow: dict[str, int] = Field(description="The runs per workflow")
