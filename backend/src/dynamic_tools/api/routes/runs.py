"""``/runs``: list and inspect runs, stream their events, answer yields, cancel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from dynamic_tools.api.deps import PrincipalDep, RunsDep, RunStoreDep
from dynamic_tools.api.params import DateTime
from dynamic_tools.api.responses import BODY, PARAMS, errors
from dynamic_tools.api.run_models import Redriven, RunList, RunStarted, RunState, RunSummary
from dynamic_tools.engine.state import RunStatus
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.execution.runs import Recovered
from dynamic_tools.persistence.run_store import RunStore

router = APIRouter(prefix="/runs", tags=["Runs"])
# Offsets and event ids past this are refused (422): the database's integers stop at 2**63,
# and JSON clients keep integers exact only to 2**53.
MAX_POSITION = 2**53 - 1


class ResumeBody(BaseModel):
    """The answer to the yield a run waits on."""

    model_config = ConfigDict(strict=True, extra="forbid")

    values: dict[str, Any] = Field(default_factory=dict)
    node_id: str | None = Field(
        default=None, description="The yield to answer when several wait; default: the first."
    )


class RedriveBody(BaseModel):
    """How to re-run a failed run from where it stopped."""

    model_config = ConfigDict(strict=True, extra="forbid")

    allow_changed_document: bool = Field(
        default=False,
        description="Reuse the recorded outputs even though the workflow's document changed "
        "since the run (409 document_changed otherwise).",
    )


@router.get("", summary="List runs", responses=errors(PARAMS), response_model=RunList)
async def list_runs(
    store: RunStoreDep,
    principal: PrincipalDep,
    status: RunStatus | None = None,
    workflow_id: str | None = None,
    since: Annotated[DateTime | None, Query(description="Created at or after (ISO 8601)")] = None,
    until: Annotated[DateTime | None, Query(description="Created before (ISO 8601)")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_POSITION)] = 0,
    owner: Annotated[
        str | None,
        Query(
            max_length=255,
            description="Only this principal's runs (admins; others see "
            "only their own whatever they give)",
        ),
    ] = None,
) -> RunList:
    """Runs, newest first, with their durations and owners: the caller's own (admins: all)."""
    found, total = await store.list_runs(
        status=status,
        workflow_id=workflow_id,
        since=since,
        until=until,
        limit=limit,
        offset=offset,
        owner=owner if principal.is_admin else principal.id,
    )
    return RunList(
        runs=[RunSummary.model_validate(run.summary()) for run in found],
        total=total,
        limit=limit,
        offset=offset,
    )


@router.get(
    "/{run_id}", summary="Get a run", responses=errors(PARAMS, 404), response_model=RunState
)
async def get_run(run_id: str, runs: RunsDep, principal: PrincipalDep) -> RunState:
    """Status, params, per-node state, result, error, waiting, owner, and who executes it.

    Per node: input, output, error, attempts and timings. ``executor``: the executor holding
    the run in the journal, since when, whether it is alive, and a sentence saying so.
    Another principal's run answers 404, as an unknown id does (admins see every run).
    """
    view = (await runs.get(run_id, principal=principal)).view()
    return RunState.model_validate({**view, "executor": await runs.executor_of(run_id)})


@router.get(
    "/{run_id}/events",
    summary="Stream run events (SSE)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **errors(PARAMS, 404)},
)
async def run_events(
    run_id: str,
    store: RunStoreDep,
    runs: RunsDep,
    principal: PrincipalDep,
    after: Annotated[
        int | None, Query(ge=0, le=MAX_POSITION, description="Resume after this event id")
    ] = None,
    last_event_id: Annotated[
        str | None, Header(pattern=r"^\s*[0-9]{0,18}\s*$", description="An event id.")
    ] = None,
) -> StreamingResponse:
    """Server-sent events, live, from ``after`` (or ``Last-Event-ID``) to the terminal event."""
    start = after if after is not None else _event_id(last_event_id)
    await runs.get(run_id, principal=principal)  # 404 before the stream starts
    return StreamingResponse(
        _stream(store, run_id, start),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post(
    "/{run_id}/resume",
    summary="Answer a yield",
    responses=errors(BODY, 404, 409),
    response_model=RunStarted,
)
async def resume_run(
    run_id: str, body: ResumeBody, runs: RunsDep, principal: PrincipalDep
) -> RunStarted:
    """Validate ``values`` against the yield's ``expects`` (422) and resume (409 if not waiting)."""
    run = await runs.resume(run_id, body.values, body.node_id, principal=principal)
    return RunStarted.model_validate({"run_id": run.run_id, "status": run.status})


@router.post(
    "/{run_id}/redrive",
    summary="Re-run a failed run from the failed node",
    status_code=202,
    responses=errors(BODY, 404, 409),
    response_model=Redriven,
)
async def redrive_run(
    run_id: str, runs: RunsDep, principal: PrincipalDep, body: RedriveBody | None = None
) -> Redriven:
    """Re-run a failed (or cancelled) run from the failed node: a new run, linked to it.

    The new run reuses the outputs of the nodes that succeeded and executes from the failed
    node on.

    ``reused`` lists the nodes taken from the earlier run. 409 ``not_redrivable`` for a run
    that did not fail, ``document_changed`` when the workflow changed since (unless
    ``allow_changed_document``), ``redrive_refused`` when a node that succeeded cannot be
    reused (its steps registered compensations).
    """
    options = body or RedriveBody()
    run, plan = await runs.redrive(
        run_id, principal=principal, allow_changed_document=options.allow_changed_document
    )
    return Redriven.model_validate(
        {
            "run_id": run.run_id,
            "status": run.status,
            "redrive_of": run_id,
            "reused": list(plan.outputs),
            "runs_again": plan.runs_again,
        }
    )


@router.post(
    "/{run_id}/cancel",
    summary="Cancel a run",
    responses=errors(PARAMS, 404, 409),
    response_model=RunStarted,
)
async def cancel_run(run_id: str, runs: RunsDep, principal: PrincipalDep) -> RunStarted:
    """Cancel a run that has not ended (409 otherwise); compensations run."""
    run = await runs.cancel(run_id, principal=principal)
    return RunStarted.model_validate({"run_id": run.run_id, "status": run.status})


@router.post(
    "/recover",
    summary="Recover the runs of a replica that is gone",
    responses=errors(PARAMS, 409),
    response_model=Recovered,
)
async def recover_runs(
    runs: RunsDep,
    executor: Annotated[
        str,
        Query(
            min_length=1,
            max_length=200,
            pattern=r"\S",
            description="The dead replica's EXECUTOR_ID",
        ),
    ],
) -> Recovered:
    """Resume here the unfinished durable runs of another replica (409 while it is alive).

    For a replica whose process is gone for good (a replica restarted with the same
    ``EXECUTOR_ID`` resumes its own runs by itself). On PostgreSQL the server checks that no
    process holds that executor id before taking anything over.
    """
    return await runs.recover(executor)


def _event_id(header: str | None) -> int:
    if header is None or not header.strip():
        return 0
    try:
        value = int(header.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_POSITION:
        raise InvalidInputError(
            "Last-Event-ID must be an event id (a non-negative integer)",
            violations=[{"path": "header.last-event-id", "message": "not an event id"}],
        )
    return value


async def _stream(store: RunStore, run_id: str, after: int) -> AsyncIterator[str]:
    yield "retry: 2000\n\n"
    async for event in store.subscribe(run_id, after=after):
        if event is None:
            yield ": keep-alive\n\n"
            continue
        data = json.dumps(event.to_dict(), separators=(",", ":"), default=str)
        yield f"id: {event.position}\nevent: {event.type}\ndata: {data}\n\n"
