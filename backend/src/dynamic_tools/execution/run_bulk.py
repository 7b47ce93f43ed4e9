"""Cancel or redrive every run of a filtered set, each run reported (docs/run-search.md).

The set is the run search's (``persistence/run_search.py``), narrowed to the runs the action
applies to: a cancel to the runs that have not ended, a redrive to the failed and cancelled
ones; a principal who is not an admin acts on their own runs only. At most :data:`MAX_BULK`
runs per call: a filter matching more is refused (422) before anything changes, so the
caller narrows it. ``run_ids`` picks runs by id (within the filter, if one is given); an id
that is unknown, another's, or not in a state the action applies to is reported as skipped.

Each run gets one entry: ``cancelled``, ``redriven`` (with the new run's id), ``skipped``
(it changed meanwhile, or a redrive was refused: the reason says why) or ``failed``. A dry
run matches and reports ``would_cancel`` / ``would_redrive`` and changes nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Literal

from loguru import logger
from pydantic import Field

from dynamic_tools.access.principals import Principal
from dynamic_tools.errors import ConflictError, DynamicToolsError, InvalidInputError, NotFoundError
from dynamic_tools.execution.runs import RunService, visible_to
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.persistence.run_search import (
    ACTIVE_STATUSES,
    REDRIVABLE_STATUSES,
    RunFilter,
)

MAX_BULK = 500
"""Runs one bulk call acts on at most."""
_PARALLEL = 8

BulkAction = Literal["cancel", "redrive"]
Outcome = Literal["cancelled", "redriven", "skipped", "failed", "would_cancel", "would_redrive"]


class BulkItem(LazyModel):
    """What happened to one run."""

    run_id: str
    outcome: Outcome
    reason: str | None = Field(default=None, description="Why it was skipped or failed")
    new_run_id: str | None = Field(default=None, description="A redrive's new run")


class BulkReport(LazyModel):
    """A bulk action's report: how many runs matched, and each run's outcome."""

    action: BulkAction
    dry_run: bool
    matched: int = Field(description="Runs the action applies to (at most 500)")
    counts: dict[str, int] = Field(description="How many runs per outcome")
    results: list[BulkItem]
    filter: dict[str, Any] = Field(description="The filter as understood (owner included)")


def _applies_to(action: BulkAction) -> tuple[str, ...]:
    return ACTIVE_STATUSES if action == "cancel" else REDRIVABLE_STATUSES


async def bulk_act(
    runs: RunService,
    action: BulkAction,
    run_filter: RunFilter,
    *,
    principal: Principal,
    dry_run: bool = False,
    allow_changed_document: bool = False,
) -> BulkReport:
    """Cancel or redrive the runs ``run_filter`` matches (see the module docstring).

    Raises:
        InvalidInputError: nothing narrows the set, or more than :data:`MAX_BULK` runs match.
    """
    own = visible_to(principal)
    if own is not None:
        run_filter = replace(run_filter, owner=own)
    if not run_filter.narrowed:
        raise InvalidInputError(
            f"say which runs to {action}: give a filter (status, workflow_id, since …) or run_ids",
            violations=[{"path": "filter", "message": "no filter and no run_ids"}],
        )
    acting = run_filter.within(_applies_to(action))
    ids = await runs.store.matching_ids(acting, MAX_BULK + 1)
    if len(ids) > MAX_BULK:
        raise InvalidInputError(
            f"more than {MAX_BULK} runs match: narrow the filter (a time range, a status, a "
            f"workflow) to at most {MAX_BULK} per call",
            violations=[{"path": "filter", "message": f"more than {MAX_BULK} runs match"}],
            context={"max": MAX_BULK},
        )
    items: dict[str, BulkItem] = {}
    for run_id in run_filter.run_ids:
        if run_id not in ids:
            items[run_id] = await _not_matched(runs, action, run_id, principal)
    if dry_run:
        would: Outcome = "would_cancel" if action == "cancel" else "would_redrive"
        acted = [BulkItem(run_id=run_id, outcome=would) for run_id in ids]
    else:
        gate = asyncio.Semaphore(_PARALLEL)

        async def one(run_id: str) -> BulkItem:
            async with gate:
                return await _act(runs, action, run_id, principal, allow_changed_document)

        acted = list(await asyncio.gather(*(one(run_id) for run_id in ids)))
    results = acted + [items[r] for r in run_filter.run_ids if r in items]
    counts: dict[str, int] = {}
    for item in results:
        counts[item.outcome] = counts.get(item.outcome, 0) + 1
    return BulkReport(
        action=action,
        dry_run=dry_run,
        matched=len(ids),
        counts=counts,
        results=results,
        filter=run_filter.described(),
    )


async def _not_matched(
    runs: RunService, action: BulkAction, run_id: str, principal: Principal
) -> BulkItem:
    """Why a run named by id is not acted on."""
    try:
        run = await runs.get(run_id, principal=principal)
    except NotFoundError as exc:  # unknown, or another principal's: the same answer
        return BulkItem(run_id=run_id, outcome="skipped", reason=exc.message)
    if run.status not in _applies_to(action):
        why = "has already ended" if action == "cancel" else "did not fail and was not cancelled"
        return BulkItem(run_id=run_id, outcome="skipped", reason=f"it {why} ({run.status})")
    return BulkItem(run_id=run_id, outcome="skipped", reason="it does not match the filter")


async def _act(
    runs: RunService, action: BulkAction, run_id: str, principal: Principal, allow: bool
) -> BulkItem:
    try:
        if action == "cancel":
            await runs.cancel(run_id, principal=principal)
            return BulkItem(run_id=run_id, outcome="cancelled")
        new, _ = await runs.redrive(run_id, principal=principal, allow_changed_document=allow)
        return BulkItem(run_id=run_id, outcome="redriven", new_run_id=new.run_id)
    except (ConflictError, NotFoundError) as exc:  # it ended, or a redrive was refused
        return BulkItem(run_id=run_id, outcome="skipped", reason=exc.message)
    except DynamicToolsError as exc:
        return BulkItem(run_id=run_id, outcome="failed", reason=exc.message)
    except Exception as exc:  # one run's failure must not stop the others
        logger.opt(exception=exc).warning("bulk {} of run {} failed", action, run_id)
        return BulkItem(run_id=run_id, outcome="failed", reason=type(exc).__name__)
