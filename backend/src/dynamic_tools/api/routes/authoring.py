"""Authoring operations over REST, the same as the MCP ``workflow.*`` tools.

Each takes a saved workflow (``workflow_id``) or a draft (``content``): previews of inputs and
rendered steps, the step plan, input resolution with value providers, a run of a draft, the
value providers, and purging ended runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, status
from pydantic import ConfigDict, Field

from dynamic_tools.api.authoring_models import (
    AuthoringRun,
    InputResolution,
    InputsPreview,
    Providers,
    Purged,
    RenderedPreview,
    StepOrder,
)
from dynamic_tools.api.deps import PrincipalDep, ServicesDep
from dynamic_tools.api.responses import BODY, PARAMS, errors
from dynamic_tools.definitions.authoring import MAX_HISTORY_DAYS, Target, WorkflowAuthoring
from dynamic_tools.engine.loaders import MAX_DOCUMENT_BYTES
from dynamic_tools.lazy_model import LazyModel

router = APIRouter(prefix="/authoring", tags=["Workflow authoring"])
history = APIRouter(tags=["Runs"])


class TargetBody(LazyModel):
    """A saved workflow, or a draft document."""

    # One of the two is needed (the service says which is missing); the document says so too.
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "anyOf": [
                {"required": ["content"], "properties": {"content": {"type": "string"}}},
                {
                    "required": ["workflow_id"],
                    "properties": {"workflow_id": {"type": "string", "minLength": 1}},
                },
            ]
        },
    )

    workflow_id: str | None = Field(default=None, description="A saved workflow's id.")
    content: str | None = Field(
        default=None, max_length=MAX_DOCUMENT_BYTES, description="A draft document."
    )
    format: Literal["yaml", "json", "xml"] | None = None
    inputs: dict[str, Any] = Field(default_factory=dict, description="Candidate input values.")


async def _target(authoring: WorkflowAuthoring, body: TargetBody) -> Target:
    return await authoring.checked_target(
        workflow_id=body.workflow_id, content=body.content, fmt=body.format
    )


@router.post(
    "/preview-inputs",
    summary="Inputs a workflow needs",
    responses=errors(BODY, 404),
    response_model=InputsPreview,
)
async def preview_inputs(body: TargetBody, services: ServicesDep) -> InputsPreview:
    """Required inputs, defaults, examples and their JSON Schema."""
    a = services.authoring
    return a.preview_inputs(await _target(a, body))


@router.post(
    "/preview-rendered",
    summary="Steps rendered from candidate inputs",
    responses=errors(BODY, 404),
    response_model=RenderedPreview,
)
async def preview_rendered(body: TargetBody, services: ServicesDep) -> RenderedPreview:
    """Each step's arguments rendered from ``inputs``; outputs of earlier steps are pending."""
    a = services.authoring
    return a.preview_rendered(await _target(a, body), body.inputs)


@router.post(
    "/step-plan",
    summary="Step plan of a saved workflow or a draft",
    responses=errors(BODY, 404),
    response_model=StepOrder,
)
async def step_plan(body: TargetBody, services: ServicesDep) -> StepOrder:
    """The ordered plan with conditions and dependencies."""
    a = services.authoring
    return a.step_order(await _target(a, body))


@router.post(
    "/resolve-inputs",
    summary="Defaults, checks and providers; ready or not",
    responses=errors(BODY, 404),
    response_model=InputResolution,
)
async def resolve_inputs(body: TargetBody, services: ServicesDep) -> InputResolution:
    """``ready`` only when every required input is present and valid."""
    a = services.authoring
    return a.resolve_inputs(await _target(a, body), body.inputs)


@router.post(
    "/runs",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Run a saved workflow or a draft",
    responses=errors(BODY, 404),
    response_model=AuthoringRun,
)
async def run(body: TargetBody, services: ServicesDep, principal: PrincipalDep) -> AuthoringRun:
    """Start a run (the caller's); answers its id and status."""
    a = services.authoring
    record = await a.run(await _target(a, body), body.inputs, principal=principal)
    return AuthoringRun.model_validate(
        {"run_id": record.run_id, "workflow_id": record.workflow_id, "status": record.status}
    )


@router.get("/providers", summary="Value providers", response_model=Providers)
async def providers(services: ServicesDep) -> Providers:
    """List operations whose result items feed other operations' inputs."""
    return Providers(providers=[p.to_dict() for p in services.authoring.providers()])


@history.delete(
    "/runs", summary="Purge ended runs", responses=errors(PARAMS), response_model=Purged
)
async def purge_history(
    services: ServicesDep,
    workflow_id: Annotated[str | None, Query(description="Only this workflow's runs.")] = None,
    older_than_days: Annotated[float | None, Query(ge=0, le=MAX_HISTORY_DAYS)] = None,
) -> Purged:
    """Delete ended runs and their events; active runs are never removed."""
    return await services.authoring.purge_history(
        workflow_id=workflow_id, older_than_days=older_than_days
    )
