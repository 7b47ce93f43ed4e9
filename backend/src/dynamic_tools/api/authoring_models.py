"""Response models of the authoring routes (``/authoring``), history purge and readiness."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dynamic_tools.api.run_models import RunStatus
from dynamic_tools.definitions.views import (
    InputResolution,
    InputsPreview,
    Purged,
    RenderedPreview,
    RenderedStep,
    StepOrder,
)

__all__ = [
    "AuthoringRun",
    "InputResolution",
    "InputsPreview",
    "Providers",
    "Purged",
    "Readiness",
    "RenderedPreview",
    "RenderedStep",
    "StepOrder",
]


class AuthoringRun(BaseModel):
    """A run of a saved workflow or a draft."""

    run_id: str
    workflow_id: str
    status: RunStatus


class Providers(BaseModel):
    """The value providers of the registry's tools."""

    providers: list[dict[str, Any]]


class Readiness(BaseModel):
    """Whether the server is ready, and each check."""

    status: str = Field(description="ready or not_ready")
    checks: dict[str, dict[str, Any]]
