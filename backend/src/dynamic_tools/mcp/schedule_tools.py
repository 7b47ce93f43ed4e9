"""The ``workflow.schedules.*`` and ``workflow.webhooks.list`` tools (docs/triggers.md).

The same actions as ``/workflows/{id}/schedules`` and ``/workflows/{id}/webhooks``: read a
workflow's schedules (next five fire times, last ticks) and webhooks, pause and resume a
schedule (``author``), run one now (``run``; the caller owns the run).
"""

from __future__ import annotations

from typing import Any

from dynamic_tools.execution.scheduler import Scheduler
from dynamic_tools.execution.webhooks import WebhookReceiver
from dynamic_tools.mcp.authoring_tools import safety_tool
from dynamic_tools.mcp.entries import SessionView, ToolEntry
from dynamic_tools.mcp.principal import current_principal
from dynamic_tools.mcp.results import Operation, object_schema, operation_handler

_WORKFLOW = {"type": "string", "minLength": 1, "description": "A saved workflow's id."}
_NAME = {
    "type": "string",
    "pattern": r"^[A-Za-z_][A-Za-z0-9_]{0,63}$",
    "description": "The schedule's name in the workflow document (workflow.schedules.list).",
}
_ONE = object_schema({"workflow_id": _WORKFLOW, "schedule": _NAME}, ["workflow_id", "schedule"])


def add_schedule_tools(
    view: SessionView, scheduler: Scheduler, webhooks: WebhookReceiver, *, base_url: str
) -> None:
    """Offer the schedule and webhook tools in ``view``."""

    async def listed(a: dict[str, Any]) -> dict[str, Any]:
        workflow_id = str(a["workflow_id"])
        return {"workflow_id": workflow_id, "schedules": await scheduler.describe(workflow_id)}

    def pausing(paused: bool) -> Operation:
        async def operation(a: dict[str, Any]) -> dict[str, Any]:
            workflow_id, name = str(a["workflow_id"]), str(a["schedule"])
            return await scheduler.set_paused(
                workflow_id, name, paused, principal=current_principal()
            )

        return operation

    async def run_now(a: dict[str, Any]) -> dict[str, Any]:
        run = await scheduler.run_now(
            str(a["workflow_id"]), str(a["schedule"]), principal=current_principal()
        )
        return {"run_id": run.run_id, "status": run.status, "trigger": run.trigger}

    async def hooks(a: dict[str, Any]) -> dict[str, Any]:
        workflow_id = str(a["workflow_id"])
        found = await webhooks.describe(workflow_id, base_url=base_url)
        return {"workflow_id": workflow_id, "webhooks": found}

    specs: list[tuple[str, str, str, dict[str, Any], Operation]] = [
        (
            "workflow.schedules.list",
            "safe",
            "The schedules a workflow's document declares: cron or interval, time zone, overlap "
            "policy, paused or not, the next five fire times and the last ticks (started, "
            "skipped, buffered, failed, with their runs).",
            object_schema({"workflow_id": _WORKFLOW}, ["workflow_id"]),
            listed,
        ),
        (
            "workflow.schedules.pause",
            "standard",
            "Pause a schedule on every replica until resumed (runs already started go on).",
            _ONE,
            pausing(True),
        ),
        (
            "workflow.schedules.resume",
            "standard",
            "Resume a paused schedule from its next tick (ticks missed while paused are not "
            "caught up).",
            _ONE,
            pausing(False),
        ),
        (
            "workflow.schedules.run_now",
            "standard",
            "Start a run with the schedule's params now ($trigger.time is now); returns run_id.",
            _ONE,
            run_now,
        ),
        (
            "workflow.webhooks.list",
            "safe",
            "The webhooks a workflow's document declares: the URL senders POST signed "
            "deliveries to, the secret's reference (never its value), the params mapping, the "
            "filter and the last deliveries.",
            object_schema({"workflow_id": _WORKFLOW}, ["workflow_id"]),
            hooks,
        ),
    ]
    for name, safety, description, schema, operation in specs:
        tool = safety_tool(name, safety, description, schema)
        view.add(ToolEntry(tool, "authoring", operation_handler(operation, changes_tools=False)))
