"""Response models of the authoring routes (``/authoring``), history purge and readiness."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dynamic_tools.api.run_models import RunStatus
from dynamic_tools.api.workflow_models import InputParam
from dynamic_tools.definitions.views import Problem


class AuthoringInputs(BaseModel):
    """The parameters of a saved workflow or a draft, their schema and an example."""

    workflow_id: str
    params: list[InputParam]
    schema_: dict[str, Any] = Field(alias="schema", serialization_alias="schema")
    example: dict[str, Any]


class RenderedStep(BaseModel):
    """A step with its arguments rendered where the inputs allow it."""

    model_config = ConfigDict(extra="allow")

    node_id: str
    kind: str
    runs: Any = Field(description="When the node runs (always, after, when activated)")


class RenderedPreview(BaseModel):
    """Each step rendered from the inputs; what needs earlier outputs stays pending."""

    workflow_id: str
    inputs: dict[str, Any]
    violations: list[Problem]
    steps: list[RenderedStep]


class StepOrderView(BaseModel):
    """The nodes in the order the interpreter takes them."""

    workflow_id: str
    steps: list[dict[str, Any]]


class InputResolution(BaseModel):
    """Which inputs are given, which have defaults, which a provider or the user must give."""

    workflow_id: str
    ready: bool
    resolved: dict[str, Any]
    defaults: dict[str, Any]
    inputs: dict[str, dict[str, Any]]
    violations: list[Problem]
    unknown_inputs: list[str]


class AuthoringRun(BaseModel):
    """A run of a saved workflow or a draft."""

    run_id: str
    workflow_id: str
    status: RunStatus


class Providers(BaseModel):
    """The value providers of the registry's tools."""

    providers: list[dict[str, Any]]


class Purged(BaseModel):
    """What a history purge removed (or would remove)."""

    model_config = ConfigDict(extra="allow")

    workflow_id: str | None = None


class Readiness(BaseModel):
    """Whether the server is ready, and each check."""

    status: str = Field(description="ready or not_ready")
    checks: dict[str, dict[str, Any]]
