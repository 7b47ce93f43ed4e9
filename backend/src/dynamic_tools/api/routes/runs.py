"""``/runs``: list and inspect runs, stream their events, answer yields, cancel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import ConfigDict, Field, StringConstraints

from dynamic_tools.access.principals import Principal
from dynamic_tools.api.deps import PrincipalDep, RunsDep, RunStoreDep
from dynamic_tools.api.params import DateTime
from dynamic_tools.api.responses import BODY, PARAMS, errors
from dynamic_tools.api.run_models import (
    Redriven,
    RedrivePreview,
    RunList,
    RunStarted,
    RunState,
    RunStats,
    RunSummary,
)
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.execution.run_bulk import MAX_BULK, BulkAction, BulkReport, bulk_act
from dynamic_tools.execution.runs import Recovered, RunService
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_search import (
    RUN_STATUSES,
    TRIGGER_KINDS,
    Paging,
    RunFilter,
    filter_from_query,
    stats_range,
)
from dynamic_tools.persistence.run_store import RunStore

router = APIRouter(prefix="/runs", tags=["Runs"])
# Offsets and event ids past this are refused (422): the database's integers stop at 2**63,
# and JSON clients keep integers exact only to 2**53.
MAX_POSITION = 2**53 - 1


class ResumeBody(LazyModel):
    """The answer to the yield a run waits on."""

    model_config = ConfigDict(strict=True, extra="forbid")

    values: dict[str, Any] = Field(default_factory=dict)
    node_id: str | None = Field(
        default=None, description="The yield to answer when several wait; default: the first."
    )


class RedriveBody(LazyModel):
    """How to re-run a failed run from where it stopped."""

    model_config = ConfigDict(strict=True, extra="forbid")

    allow_changed_document: bool = Field(
        default=False,
        description="Reuse the recorded outputs even though the workflow's document changed "
        "since the run (409 document_changed otherwise).",
    )
    dry_run: bool = Field(
        default=False,
        description="Only say what a redrive would reuse and run again (the same refusals), "
        "creating no run.",
    )


_FILTER_DOC = (
    "Filters (docs/run-search.md): workflow_id and status (repeat them, or separate with "
    "commas), owner, trigger (schedule, webhook, manual) and trigger_name, since/until "
    "(created), ended_after/ended_before, params.<name>=<value> and output.<name>=<value> (a "
    "top-level param or output, compared as text), error (a case-insensitive part of the error "
    "message). Any other query key is refused (422)."
)
# What the search takes as text (persistence/run_search.py refuses the rest), declared so the
# OpenAPI document says it: no NUL; a workflow id at most 128 characters, several by commas.
_NO_NUL = r"^[^\x00]*$"
_IDS = r"^[^\x00,]{0,128}(,[^\x00,]{0,128})*$"
_Many = Annotated[
    list[Annotated[str, StringConstraints(pattern=_IDS)]] | None,
    Query(description="Repeat, or separate values with commas"),
]


def _one_of(values: tuple[str, ...]) -> str:
    """A pattern for one value of ``values`` or several separated by commas."""
    choice = "|".join(values)
    return rf"^\s*({choice})\s*(,\s*({choice})\s*)*$"


_Statuses = Annotated[
    list[Annotated[str, StringConstraints(pattern=_one_of(RUN_STATUSES))]] | None,
    Query(description="Repeat, or separate values with commas"),
]
_Triggers = Annotated[
    list[Annotated[str, StringConstraints(pattern=_one_of(TRIGGER_KINDS))]] | None,
    Query(description="Repeat, or separate values with commas"),
]
_Time = Annotated[DateTime | None, Query(description="ISO 8601, with its offset")]


@router.get(
    "",
    summary="List and search runs",
    responses=errors(PARAMS),
    response_model=RunList,
    openapi_extra={
        "parameters": [
            {
                "name": "params.{name}",
                "in": "query",
                "required": False,
                "description": "Runs whose top-level param <name> is this value (as text)",
                "schema": {"type": "string", "maxLength": 4096, "pattern": _NO_NUL},
            },
            {
                "name": "output.{name}",
                "in": "query",
                "required": False,
                "description": "Runs whose top-level output <name> is this value (as text)",
                "schema": {"type": "string", "maxLength": 4096, "pattern": _NO_NUL},
            },
        ]
    },
)
async def list_runs(
    request: Request,
    store: RunStoreDep,
    principal: PrincipalDep,
    status: _Statuses = None,
    workflow_id: _Many = None,
    trigger: _Triggers = None,
    trigger_name: Annotated[str | None, Query(max_length=128, pattern=_NO_NUL)] = None,
    since: Annotated[DateTime | None, Query(description="Created at or after (ISO 8601)")] = None,
    until: Annotated[DateTime | None, Query(description="Created before (ISO 8601)")] = None,
    ended_after: _Time = None,
    ended_before: _Time = None,
    error: Annotated[
        str | None,
        Query(max_length=255, pattern=_NO_NUL, description="A part of the error message, any case"),
    ] = None,
    sort: Annotated[
        Literal["-created_at", "created_at", "-finished_at", "finished_at"],
        Query(description="By creation or end, '-' for newest first; by end: ended runs only"),
    ] = "-created_at",
    cursor: Annotated[
        str | None, Query(max_length=1000, pattern=_NO_NUL, description="A page's next_cursor")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_POSITION)] = 0,
    owner: Annotated[
        str | None,
        Query(
            max_length=255,
            pattern=_NO_NUL,
            description="Only this principal's runs (admins; others see "
            "only their own whatever they give)",
        ),
    ] = None,
) -> RunList:
    """Runs matching the filters, sorted and paged by cursor (or offset).

    The caller's own runs (admins: all). Each with its duration, owner, error in short and
    trigger. ``total`` counts the matches up to 10,000 (``total_exact`` says whether it
    stopped there); ``next_cursor`` is null on the last page.
    """
    run_filter, paging = _search_of(request, principal)
    found, next_cursor, total, exact = await store.search(run_filter, paging)
    return RunList(
        runs=[RunSummary.model_validate(run.summary()) for run in found],
        total=total,
        total_exact=exact,
        limit=paging.limit,
        offset=paging.offset,
        next_cursor=next_cursor,
    )


list_runs.__doc__ = f"{list_runs.__doc__}\n\n{_FILTER_DOC}"


@router.get(
    "/stats",
    summary="Count runs by status, workflow and time",
    responses=errors(PARAMS),
    response_model=RunStats,
)
async def run_stats(
    request: Request,
    store: RunStoreDep,
    principal: PrincipalDep,
    since: Annotated[
        DateTime | None, Query(description="Created at or after; default: a day before until")
    ] = None,
    until: Annotated[DateTime | None, Query(description="Created before; default: now")] = None,
    bucket: Annotated[
        int | None,
        Query(
            ge=60,
            le=366 * 86400,
            description="Bucket length in seconds; default: from the range (about 48 buckets)",
        ),
    ] = None,
    status: _Statuses = None,
    workflow_id: _Many = None,
    trigger: _Triggers = None,
    owner: Annotated[str | None, Query(max_length=255, pattern=_NO_NUL)] = None,
) -> RunStats:
    """Counts of the runs created in ``[since, until)`` by status, by workflow and per bucket.

    The caller's own runs (admins: all). Takes the filters ``GET /runs`` takes (not sort,
    cursor, limit or offset); at most 500 buckets.
    """
    run_filter, paging = _search_of(request, principal, paged=False)
    ranged, size = stats_range(run_filter, paging.bucket, utc_now())
    return RunStats.model_validate((await store.stats(ranged, size)).to_dict())


class BulkBody(LazyModel):
    """Which runs of the filtered set, and whether to act or only count."""

    model_config = ConfigDict(strict=True, extra="forbid")

    run_ids: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(
        default=None,
        max_length=MAX_BULK,
        description="Only these runs (within the query's filters, if any)",
    )
    dry_run: bool = Field(default=False, description="Only say which runs it would act on")
    allow_changed_document: bool = Field(
        default=False, description="Redrive: reuse outputs though the document changed"
    )


@router.post(
    "/cancel",
    summary="Cancel the runs a filter matches",
    responses=errors(BODY),
    response_model=BulkReport,
)
async def cancel_runs(
    request: Request, runs: RunsDep, principal: PrincipalDep, body: BulkBody | None = None
) -> BulkReport:
    """Cancel every run the query's filters (as ``GET /runs``'s) match that has not ended.

    At most 500 runs per call (422 when more match: narrow the filter); the caller's own runs
    (admins: anyone's). Each run is reported: cancelled, skipped (with why) or failed.
    ``dry_run`` reports ``would_cancel`` and changes nothing.
    """
    return await _bulk(request, runs, principal, "cancel", body or BulkBody())


@router.post(
    "/redrive",
    summary="Redrive the runs a filter matches",
    responses=errors(BODY),
    response_model=BulkReport,
)
async def redrive_runs(
    request: Request, runs: RunsDep, principal: PrincipalDep, body: BulkBody | None = None
) -> BulkReport:
    """Redrive every failed or cancelled run the query's filters match: a new run each.

    At most 500 runs per call (422 when more match); the caller's own runs (admins:
    anyone's). Each run is reported: redriven (with ``new_run_id``), skipped (the redrive was
    refused: why) or failed. ``dry_run`` reports ``would_redrive`` and changes nothing.
    """
    return await _bulk(request, runs, principal, "redrive", body or BulkBody())


async def _bulk(
    request: Request, runs: RunService, principal: Principal, action: BulkAction, body: BulkBody
) -> BulkReport:
    run_filter, _ = _search_of(request, principal, paged=False)
    if body.run_ids:
        run_filter = replace(run_filter, run_ids=tuple(dict.fromkeys(body.run_ids)))
    return await bulk_act(
        runs,
        action,
        run_filter,
        principal=principal,
        dry_run=body.dry_run,
        allow_changed_document=body.allow_changed_document,
    )


def _search_of(
    request: Request, principal: Principal, *, paged: bool = True
) -> tuple[RunFilter, Paging]:
    """The filter and paging of the query string; a principal not admin sees their own runs."""
    items = request.query_params.multi_items()
    if not paged:
        refused = [k for k, _ in items if k in ("sort", "cursor", "limit", "offset")]
        if refused:
            raise InvalidInputError(
                f"query.{refused[0]}: not a filter of this route",
                violations=[
                    {"path": f"query.{refused[0]}", "message": "not a filter of this route"}
                ],
            )
    elif any(k == "bucket" for k, _ in items):
        raise InvalidInputError(
            "query.bucket: only GET /runs/stats takes it",
            violations=[{"path": "query.bucket", "message": "only GET /runs/stats takes it"}],
        )
    run_filter, paging = filter_from_query(items)
    if not principal.is_admin:
        run_filter = replace(run_filter, owner=principal.id)
    return run_filter, paging


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
    responses={
        200: {"model": RedrivePreview, "description": "dry_run: what a redrive would do"},
        **errors(BODY, 404, 409),
    },
    response_model=Redriven | RedrivePreview,
)
async def redrive_run(
    run_id: str,
    runs: RunsDep,
    principal: PrincipalDep,
    response: Response,
    body: RedriveBody | None = None,
) -> Redriven | RedrivePreview:
    """Re-run a failed (or cancelled) run from the failed node: a new run, linked to it.

    The new run reuses the outputs of the nodes that succeeded and executes from the failed
    node on.

    ``reused`` lists the nodes taken from the earlier run. 409 ``not_redrivable`` for a run
    that did not fail, ``document_changed`` when the workflow changed since (unless
    ``allow_changed_document``), ``redrive_refused`` when a node that succeeded cannot be
    reused (its steps registered compensations).

    ``dry_run`` answers 200 with what a redrive would reuse and run again (the same refusals)
    and creates no run.
    """
    options = body or RedriveBody()
    if options.dry_run:
        preview = await runs.preview_redrive(
            run_id, principal=principal, allow_changed_document=options.allow_changed_document
        )
        response.status_code = 200
        return RedrivePreview(
            redrive_of=run_id, reused=list(preview.outputs), runs_again=preview.runs_again
        )
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
