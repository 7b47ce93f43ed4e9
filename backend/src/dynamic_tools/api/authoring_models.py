"""Response models of the authoring routes (``/authoring``), history purge and readiness."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from dynamic_tools.api.run_models import RunStatus
from dynamic_tools.definitions.views import (
    InputResolution,
    InputsPreview,
    Purged,
    RenderedPreview,
    RenderedStep,
    StepOrder,
)
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import Sparse
from dynamic_tools.tools.catalog_views import ProviderContractView

__all__ = [
    "AuthoringRun",
    "DatabaseCheck",
    "InputResolution",
    "InputsPreview",
    "LlmCheck",
    "Providers",
    "Purged",
    "Readiness",
    "ReadinessChecks",
    "RegistryCheck",
    "RenderedPreview",
    "RenderedStep",
    "StepOrder",
]


class AuthoringRun(LazyModel):
    """A run of a saved workflow or a draft."""

    run_id: str
    workflow_id: str
    status: RunStatus


class Providers(LazyModel):
    """The value providers of the registry's tools."""

    providers: list[ProviderContractView]


class RegistryCheck(LazyModel):
    """Whether the tool registry can be read, its tools and its files' problems."""

    ok: bool
    tools: int
    problems: int


class DatabaseCheck(Sparse):
    """Whether the database answers: its backend, or the error's type."""

    SPARSE: ClassVar[frozenset[str]] = frozenset({"backend", "error"})

    ok: bool
    backend: str | None = Field(default=None, description="The SQL dialect, when it answers")
    error: str | None = Field(default=None, description="The error's type, when it does not")


class LlmCheck(Sparse):
    """Whether an LLM is configured (not a readiness condition), and what it does.

    What to set when it is not; what the endpoint was found to do (docs/llm-servers.md).
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"needs", "capabilities", "method", "source", "notes", "probed_at", "probe"}
    )

    configured: bool
    needs: str | None = Field(default=None, description="The settings to set (names only)")
    capabilities: list[str] | None = Field(
        default=None, description="What the endpoint does (LLM_CAPABILITIES or the probe)"
    )
    method: Literal["required", "named", "json_schema", "auto", "text"] | None = Field(
        default=None, description="How a function call is asked for (LLM_TOOL_CHOICE)"
    )
    source: Literal["settings", "probe", "openai", "unknown"] | None = Field(
        default=None, description="Where the capabilities come from"
    )
    notes: list[str] | None = Field(default=None, description="What the probe saw fail")
    probed_at: str | None = Field(default=None, description="When the probe ran (UTC)")
    probe: Literal["running", "failed"] | None = Field(
        default=None, description="The probe is still running, or could not reach the endpoint"
    )


class ReadinessChecks(LazyModel):
    """Each readiness check."""

    registry: RegistryCheck
    database: DatabaseCheck
    llm: LlmCheck


class Readiness(LazyModel):
    """Whether the server is ready, and each check."""

    status: str = Field(description="ready or not_ready")
    checks: ReadinessChecks
