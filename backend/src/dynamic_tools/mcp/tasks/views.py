"""A task as the client sees it: the 2025-11-25 ``Task`` with the run's details in ``_meta``.

Status: the task's own end when it has one (``failed``, ``cancelled``: final, whatever its run
does next); else its run's — ``pending``/``running`` → ``working``, ``waiting_input`` →
``input_required``, ``succeeded`` → ``completed``, ``failed``, ``cancelled``; before it has a run,
the task's row (``working``, or ``input_required`` while it waits for the client). ``_meta``
carries the run id, the steps done and in all and the current step
(:func:`~dynamic_tools.persistence.run_view.step_progress`, the one snapshot of where a run is),
the progress state (``pending``, ``running``, ``succeeded``, ``failed``, ``canceled``) and a
summary. The run must be loaded with its nodes.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from dynamic_tools.persistence.run_view import RunRecord, iso, step_progress
from dynamic_tools.persistence.task_store import TaskRow

RUN_META = "dynamic-tools/run"
POLL_INTERVAL_MS = 500
TERMINAL = frozenset({"completed", "failed", "cancelled"})
STATUS = {
    "pending": "working",
    "running": "working",
    "waiting_input": "input_required",
    "succeeded": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
}
PROGRESS = {"succeeded": "succeeded", "failed": "failed", "cancelled": "canceled"}


def task_view(row: TaskRow, run: RunRecord | None, stage: str | None = None) -> dict[str, Any]:
    """The task on the wire; ``stage`` is the live stage of work not yet running (if known)."""
    if run is not None:
        status, summary, details = _run_part(run)
    else:
        status = row.status if row.status == "input_required" else "working"
        summary = stage or row.stage
        details = {
            "run_id": None,
            "workflow_id": None,
            "current_step": summary,
            "progress_state": "pending" if summary == "starting" else "running",
            "summary": summary,
        }
    if row.ended:
        status = row.status
        summary = _failure_message(row) or "the task was cancelled"
        details = {**details, "progress_state": PROGRESS[row.status], "summary": summary}
    updated = max([row.updated_at] + ([run.updated_at] if run is not None else []))
    task = types.Task(
        task_id=row.task_id,
        status=status,
        status_message=summary,
        created_at=iso(row.created_at) or "",
        last_updated_at=iso(updated) or "",
        ttl=row.ttl_ms,
        poll_interval=POLL_INTERVAL_MS,
    )
    data: dict[str, Any] = task.model_dump(by_alias=True, mode="json", exclude_none=True)
    data["ttl"] = row.ttl_ms  # always present (null: unlimited)
    data["_meta"] = {RUN_META: details}
    return data


def _run_part(run: RunRecord) -> tuple[str, str, dict[str, Any]]:
    progress = step_progress(run)
    current, done, total = progress.current, progress.done, progress.total
    summary = {
        "waiting_input": f"waiting for input at '{current}': "
        + str((run.waiting_prompt() or {}).get("message", "")),
        "succeeded": f"the run succeeded; {done}/{total} steps done",
        "failed": "the run failed: " + str((run.error or {}).get("message", "")),
        "cancelled": "the run was cancelled",
    }.get(run.status, f"step {current or '-'} running; {done}/{total} steps done")
    details = {
        "run_id": run.run_id,
        "workflow_id": run.workflow_id,
        "current_step": current,
        "progress_state": PROGRESS.get(run.status, "running" if run.started_at else "pending"),
        "steps_done": done,
        "steps_total": total,
        "summary": summary,
    }
    return STATUS.get(run.status, "working"), summary, details


def _failure_message(row: TaskRow) -> str | None:
    failure = row.failure or {}
    payload = failure.get("structuredContent") or {}
    message = payload.get("message") if isinstance(payload, dict) else None
    return f"{payload.get('error_code')}: {message}" if message else None
