"""Schedules and webhooks: their state and actions, and the route deliveries arrive on.

``/workflows/{id}/schedules`` (list, pause, resume, run now) and ``/workflows/{id}/webhooks``
(where to POST, a signed example) need a credential; ``POST /hooks/{id}/{name}`` needs none —
the delivery's signature is its credential — and is rate-limited per hook (docs/triggers.md).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, status

from dynamic_tools.api.deps import PrincipalDep, ServicesDep, note_audit_target
from dynamic_tools.api.responses import BODY, PARAMS, errors
from dynamic_tools.api.run_models import RunStarted
from dynamic_tools.api.trigger_models import (
    DeliveryAccepted,
    ExampleBody,
    ScheduleList,
    ScheduleView,
    WebhookExample,
    WebhookList,
)
from dynamic_tools.engine.models import IDENTIFIER

router = APIRouter(prefix="/workflows", tags=["Triggers"])
hooks = APIRouter(prefix="/hooks", tags=["Triggers"])
WorkflowId = Annotated[str, Path(description="A workflow's id.")]
TriggerName = Annotated[str, Path(pattern=IDENTIFIER, description="The trigger's name.")]


def _base_url(request: Request, services: ServicesDep) -> str:
    settings = services.settings
    return settings.base_url if settings.public_base_url else str(request.base_url)


@router.get(
    "/{workflow_id}/schedules",
    summary="List a workflow's schedules",
    responses=errors(PARAMS, 404),
    response_model=ScheduleList,
)
async def list_schedules(workflow_id: WorkflowId, services: ServicesDep) -> ScheduleList:
    """Each schedule: its definition, paused or not, its next five fire times, its last ticks."""
    found = await services.scheduler.describe(workflow_id)
    return ScheduleList.model_validate({"workflow_id": workflow_id, "schedules": found})


async def _set_paused(
    request: Request, services: ServicesDep, principal: PrincipalDep, paused: bool
) -> ScheduleView:
    """Pause or resume the schedule the path names; the schedule as it is then."""
    workflow_id, name = request.path_params["workflow_id"], request.path_params["name"]
    note_audit_target(request, f"{workflow_id}/{name}")
    changed = await services.scheduler.set_paused(workflow_id, name, paused, principal=principal)
    return ScheduleView.model_validate(changed)


@router.post(
    "/{workflow_id}/schedules/{name}/pause",
    summary="Pause a schedule",
    responses=errors(PARAMS, 404),
    response_model=ScheduleView,
)
async def pause_schedule(
    workflow_id: WorkflowId,
    name: TriggerName,
    services: ServicesDep,
    principal: PrincipalDep,
    request: Request,
) -> ScheduleView:
    """Stop firing until resumed (on every replica); runs already started go on."""
    return await _set_paused(request, services, principal, True)


@router.post(
    "/{workflow_id}/schedules/{name}/resume",
    summary="Resume a schedule",
    responses=errors(PARAMS, 404),
    response_model=ScheduleView,
)
async def resume_schedule(
    workflow_id: WorkflowId,
    name: TriggerName,
    services: ServicesDep,
    principal: PrincipalDep,
    request: Request,
) -> ScheduleView:
    """Fire again from the next tick (the ticks missed while paused are not caught up)."""
    return await _set_paused(request, services, principal, False)


@router.post(
    "/{workflow_id}/schedules/{name}/run",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Run a schedule now",
    responses=errors(PARAMS, 404),
    response_model=RunStarted,
)
async def run_schedule_now(
    workflow_id: WorkflowId, name: TriggerName, services: ServicesDep, principal: PrincipalDep
) -> RunStarted:
    """Start a run with the schedule's params now (``$trigger.time`` is now); the caller owns it.

    Paused or not, and whatever its overlap policy: a person asked for it.
    """
    run = await services.scheduler.run_now(workflow_id, name, principal=principal)
    return RunStarted.model_validate({"run_id": run.run_id, "status": run.status})


@router.get(
    "/{workflow_id}/webhooks",
    summary="List a workflow's webhooks",
    responses=errors(PARAMS, 404),
    response_model=WebhookList,
)
async def list_webhooks(
    workflow_id: WorkflowId, services: ServicesDep, request: Request
) -> WebhookList:
    """Each webhook: the URL to POST to, its secret's name (never its value), its mapping."""
    found = await services.webhooks.describe(workflow_id, base_url=_base_url(request, services))
    return WebhookList.model_validate({"workflow_id": workflow_id, "webhooks": found})


@router.post(
    "/{workflow_id}/webhooks/{name}/example",
    summary="Sign an example delivery",
    responses=errors(BODY, 404, 503),
    response_model=WebhookExample,
)
async def webhook_example(
    workflow_id: WorkflowId,
    name: TriggerName,
    body: ExampleBody,
    services: ServicesDep,
    request: Request,
) -> WebhookExample:
    """A curl command that delivers ``body`` signed with the webhook's secret (for 5 minutes)."""
    example = services.webhooks.example(
        workflow_id, name, body.body, base_url=_base_url(request, services)
    )
    return WebhookExample.model_validate(example)


@hooks.post(
    "/{workflow_id}/{name}",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Deliver to a webhook",
    responses=errors(BODY, 401, 404, 409, 429, 503),
    response_model=DeliveryAccepted,
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": {"description": "Any JSON value"}}},
        }
    },
)
async def deliver(
    workflow_id: WorkflowId, name: TriggerName, request: Request, services: ServicesDep
) -> DeliveryAccepted:
    """Start a run from a signed delivery (Standard Webhooks: webhook-id, -timestamp, -signature).

    No API key: the signature is the credential. 202 with the run id at once; a redelivery
    (the same webhook-id and body) answers with the first run; 401 a bad or old signature,
    409 a reused id with another body, 413 a body over WEBHOOK_MAX_BODY_BYTES, 422 a body
    that is not JSON or does not give the params (naming each), 429 over the hook's rate.
    """
    body = await request.body()
    accepted = await services.webhooks.receive(workflow_id, name, body, dict(request.headers))
    return DeliveryAccepted(
        run_id=accepted.run_id,
        duplicate=accepted.duplicate,
        filtered=accepted.filtered,
        status_url=f"/runs/{accepted.run_id}" if accepted.run_id else None,
    )
