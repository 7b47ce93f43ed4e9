"""The ``workflow.*`` authoring tools, by safety level.

- safe (read-only): ``workflow.list``, ``workflow.get``, ``workflow.validate``,
  ``workflow.preview_inputs``, ``workflow.preview_rendered``, ``workflow.step_plan``,
  ``workflow.resolve_inputs``;
- standard (mutating, reversible): ``workflow.save``, ``workflow.rename``, ``workflow.run``,
  ``workflow.redrive``;
- destructive: ``workflow.delete``, ``workflow.cancel``, ``workflow.purge_history``,
  ``workflow.cancel_runs``, ``workflow.redrive_runs`` (a filtered set of runs at once);
- the run search (safe): ``workflow.list_runs``, ``workflow.run_stats`` (docs/run-search.md).

A draft run with ``content`` (not saved) was composed by a model: its calls are held to the
safe-by-default rule (``tools/safety.py``); a saved workflow keeps what it declares.

The level is in the annotations (``readOnlyHint`` / ``destructiveHint``) and in ``_meta``
(``dynamic-tools/safety``). Saves, renames and deletes announce ``tools/list_changed`` (the
``w_*`` tools and the command catalog follow the files).

The design's argument names work too (:mod:`dynamic_tools.mcp.aliases`): ``manifest`` for
``content``, ``version`` for ``expected_version`` (``workflow.save``), ``operation_id`` (a run
id or a task id) for ``run_id`` (``workflow.cancel``). Results that concern a document carry its
absolute ``path``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

import mcp_types as types
from loguru import logger
from pydantic import BaseModel

from dynamic_tools.definitions.authoring import MAX_HISTORY_DAYS, Target, WorkflowAuthoring
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.errors import ConflictError, ConflictKind, InvalidInputError, NotFoundError
from dynamic_tools.execution.run_bulk import BulkAction, bulk_act
from dynamic_tools.execution.runs import RunService, visible_to
from dynamic_tools.mcp.aliases import Alias, alias_property, apply_aliases, with_aliases
from dynamic_tools.mcp.confirmation import CONFIRMATION_TOKEN, DRY_RUN
from dynamic_tools.mcp.entries import SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.principal import current_principal
from dynamic_tools.mcp.results import Operation, object_schema, operation_handler
from dynamic_tools.persistence.db import utc_now
from dynamic_tools.persistence.run_search import (
    Paging,
    RunFilter,
    filter_from_arguments,
    stats_range,
)
from dynamic_tools.violations import errors_only

SAFETY_KEY = "dynamic-tools/safety"
ANNOTATIONS = {
    "safe": types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
    "standard": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
    ),
    "destructive": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    ),
}
_ID = {"type": "string", "minLength": 1, "description": "A saved workflow's id."}
_CONTENT = {"type": "string", "minLength": 1, "description": "A workflow document (a draft)."}
_FORMAT = {"type": "string", "enum": ["yaml", "json", "xml"], "description": "Of content."}
_INPUTS = {"type": "object", "description": "Input values by param name.", "default": {}}
_VERSION = {"type": "string", "description": "The version workflow.get gave (optimistic lock)."}
_CONFIRM = {"confirmation_token": CONFIRMATION_TOKEN}
MANIFEST = Alias("manifest", "content")
VERSION = Alias("version", "expected_version")
OPERATION = Alias("operation_id", "run_id")
_MANIFEST = alias_property(MANIFEST, _CONTENT)
_TARGET = {"workflow_id": _ID, "content": _CONTENT, "manifest": _MANIFEST, "format": _FORMAT}
_RUN_ID = {"type": "string", "minLength": 1, "description": "The run to cancel."}
_OPERATION_ID = {
    "type": "string",
    "minLength": 1,
    "description": "Another name for 'run_id' (the MCP authoring design's name): a run id, or "
    "the taskId of an MCP task; give one of the two.",
}


_MANY = {
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "items": {"type": "string", "minLength": 1}},
    ]
}
_TIME = {"type": "string", "description": "ISO 8601 with its offset", "minLength": 1}
_VALUES = {
    "type": "object",
    "additionalProperties": {"type": ["string", "number", "boolean"]},
    "description": "name → value; a run matches when each top-level value is this (as text)",
}
_RUN_FILTER: dict[str, Any] = {
    "workflow_id": {**_MANY, "description": "One workflow id or a list"},
    "status": {
        **_MANY,
        "description": "pending, running, waiting_input, succeeded, failed, "
        "cancelled: one or a list",
    },
    "owner": {"type": "string", "minLength": 1, "description": "Admins: this principal's runs"},
    "trigger": {**_MANY, "description": "schedule, webhook or manual: one or a list"},
    "trigger_name": {"type": "string", "minLength": 1},
    "since": {**_TIME, "description": "Created at or after (ISO 8601)"},
    "until": {**_TIME, "description": "Created before (ISO 8601)"},
    "ended_after": _TIME,
    "ended_before": _TIME,
    "params": _VALUES,
    "output": _VALUES,
    "error": {"type": "string", "minLength": 1, "description": "Part of the error message"},
}
_PAGING: dict[str, Any] = {
    "sort": {
        "type": "string",
        "enum": ["-created_at", "created_at", "-finished_at", "finished_at"],
    },
    "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
    "cursor": {"type": "string", "minLength": 1, "description": "next_cursor of the last page"},
}
_BULK: dict[str, Any] = {
    "run_ids": {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "maxItems": 500,
        "description": "Only these runs (within the filters, if any)",
    }
}


def safety_tool(
    name: str,
    safety: str,
    description: str,
    schema: dict[str, Any],
    *,
    execution: types.ToolExecution | None = None,
) -> types.Tool:
    """A tool whose description starts with its safety class, annotated to match it."""
    return types.Tool(
        name=name,
        description=f"[{safety}] {description}",
        input_schema=schema,
        annotations=ANNOTATIONS[safety],
        meta={SAFETY_KEY: safety},
        execution=execution,
    )


class TaskLookup(Protocol):
    """What ``workflow.cancel`` needs of the MCP Tasks runtime.

    Task ids are run ids, except for tasks whose run has not started yet.
    """

    def run_of(self, task_id: str) -> str | None:
        """The run of task ``task_id`` when it has one (None: no such task, or no run yet)."""

    async def task_state(self, task_id: str) -> str | None:
        """A task without a run: ``drafting`` or ``ended``; None for any other id."""

    async def cancel_job(self, task_id: str) -> bool:
        """Cancel a task that has no run yet; False when there is no such task."""


class AuthoringTools:
    """Builds the authoring entries over the repository, runs and authoring service."""

    def __init__(
        self,
        workflows: WorkflowRepository,
        runs: RunService,
        authoring: WorkflowAuthoring,
        tasks: TaskLookup | None = None,
    ) -> None:
        self.workflows = workflows
        self.runs = runs
        self.authoring = authoring
        self.tasks = tasks

    def add_to(self, view: SessionView) -> None:
        """Offer every authoring tool in ``view``."""
        a = self.authoring
        specs: list[tuple[str, str, str, dict[str, Any], Operation, bool]] = [
            (
                "workflow.list",
                "safe",
                "List the saved workflows: id, title, description, file, format, version, "
                "params, validity.",
                object_schema({}),
                self._list,
                False,
            ),
            (
                "workflow.get",
                "safe",
                "Get one workflow: workflow_id, path, format, content (raw text to edit), parsed "
                "(normalised JSON) and version (pass it to workflow.save as expected_version).",
                object_schema({"workflow_id": _ID}, ["workflow_id"]),
                self._get,
                False,
            ),
            (
                "workflow.validate",
                "safe",
                "Validate a workflow document without saving it: valid, errors, warnings and "
                "violations[] (path, rule, message, line, expected, actual).",
                object_schema({"content": _CONTENT, "manifest": _MANIFEST, "format": _FORMAT}),
                self._validate,
                False,
            ),
            (
                "workflow.preview_inputs",
                "safe",
                "The inputs a workflow needs: required ones, defaults, examples, rules, and "
                "their JSON Schema. Give workflow_id or a draft's content.",
                object_schema(_TARGET),
                lambda args: _on_target(a, args, lambda t: _json(a.preview_inputs(t))),
                False,
            ),
            (
                "workflow.preview_rendered",
                "safe",
                "Each step with its arguments rendered from candidate inputs; arguments that "
                "come from earlier steps' outputs are listed as pending.",
                object_schema({**_TARGET, "inputs": _INPUTS}),
                lambda args: _on_target(
                    a, args, lambda t: _json(a.preview_rendered(t, dict(args.get("inputs") or {})))
                ),
                False,
            ),
            (
                "workflow.step_plan",
                "safe",
                "The ordered step plan: each node, how it gets to run (always, after its "
                "dependencies, when a branch/fallback activates it), its conditions.",
                object_schema({**_TARGET, "inputs": _INPUTS}),
                lambda args: _on_target(a, args, lambda t: _json(a.step_order(t))),
                False,
            ),
            (
                "workflow.resolve_inputs",
                "safe",
                "Apply defaults to partial inputs and check them; ready is true only when every "
                "required input is present and valid. Missing inputs name the value providers "
                "(list operations) that can supply them.",
                object_schema({**_TARGET, "inputs": _INPUTS}),
                lambda args: _on_target(
                    a, args, lambda t: _json(a.resolve_inputs(t, dict(args.get("inputs") or {})))
                ),
                False,
            ),
            (
                "workflow.save",
                "standard",
                "Validate, then write a workflow document atomically to the runtime directory. "
                "To change an existing workflow pass expected_version from workflow.get (a stale "
                "one fails with 'conflict'); overwrite=true replaces without a version check.",
                object_schema(
                    {
                        "content": _CONTENT,
                        "manifest": _MANIFEST,
                        "format": _FORMAT,
                        "workflow_id": {
                            "type": "string",
                            "description": "The workflow (or file name) to write; default: the "
                            "document's first workflow id.",
                        },
                        "expected_version": _VERSION,
                        "version": alias_property(VERSION, _VERSION),
                        "overwrite": {"type": "boolean", "default": False},
                    },
                ),
                self._save,
                True,
            ),
            (
                "workflow.rename",
                "standard",
                "Rename a workflow (and the sub-workflow calls to it).",
                object_schema(
                    {"workflow_id": _ID, "new_id": _ID, "expected_version": _VERSION},
                    ["workflow_id", "new_id"],
                ),
                self._rename,
                True,
            ),
            (
                "workflow.run",
                "standard",
                "Start a run of a saved workflow or a draft; returns run_id at once. Follow it "
                "with w_<id> calls' results, workflow.resume, or as an MCP task (tasks/get).",
                object_schema({**_TARGET, "inputs": _INPUTS}),
                lambda args: self._run(args, view),
                False,
            ),
            (
                "workflow.redrive",
                "standard",
                "Re-run a failed (or cancelled) run from the node that failed: a new run, linked "
                "to it, that reuses the recorded outputs of the nodes that succeeded (their calls "
                "are not made again, a yield's answer is kept) and runs the rest. Returns the new "
                "run_id, the nodes reused and why each other node runs again.",
                object_schema(
                    {
                        "run_id": {
                            "type": "string",
                            "minLength": 1,
                            "description": "The failed or cancelled run.",
                        },
                        "allow_changed_document": {
                            "type": "boolean",
                            "default": False,
                            "description": "Reuse the recorded outputs even though the "
                            "workflow's document changed since the run.",
                        },
                        "dry_run": {
                            "type": "boolean",
                            "default": False,
                            "description": "Only say which nodes would be reused and why the "
                            "others run again; no run is started.",
                        },
                    },
                    ["run_id"],
                ),
                self._redrive,
                False,
            ),
            (
                "workflow.delete",
                "destructive",
                "Delete a saved workflow (its file when it held only this workflow). Only when "
                "the user asked for it. The user is asked to confirm when the client can; "
                "otherwise the answer is a preview and a confirmation_token to call again with. "
                "dry_run=true only says what would be removed.",
                object_schema(
                    {
                        "workflow_id": _ID,
                        "expected_version": _VERSION,
                        "dry_run": DRY_RUN,
                        **_CONFIRM,
                    },
                    ["workflow_id"],
                ),
                self._delete,
                True,
            ),
            (
                "workflow.cancel",
                "destructive",
                "Cancel an active run (its running steps stop and compensations run). Give "
                "run_id, or operation_id: a run id or an MCP task's taskId. The user is asked "
                "to confirm when the client can; otherwise the answer is a preview and a "
                "confirmation_token to call again with. dry_run=true only says what it would "
                "cancel.",
                object_schema(
                    {
                        "run_id": _RUN_ID,
                        "operation_id": _OPERATION_ID,
                        "dry_run": DRY_RUN,
                        **_CONFIRM,
                    }
                ),
                self._cancel,
                False,
            ),
            (
                "workflow.purge_history",
                "destructive",
                "Delete ended runs and their events. Needs a scope: workflow_id, "
                "older_than_days, input_keys (runs whose inputs have all these keys), or "
                "all=true for every ended run. Active runs are never removed. The user is "
                "asked to confirm when the client can; otherwise the answer is a preview and a "
                "confirmation_token to call again with. dry_run=true only counts.",
                {
                    **object_schema(
                        {
                            "workflow_id": {"type": "string", "minLength": 1},
                            "older_than_days": {
                                "type": "number",
                                "minimum": 0,
                                "maximum": MAX_HISTORY_DAYS,
                            },
                            "input_keys": {
                                "type": "array",
                                "items": {"type": "string", "minLength": 1},
                                "minItems": 1,
                            },
                            "all": {
                                "type": "boolean",
                                "description": "true: every ended run of every workflow.",
                            },
                            "dry_run": DRY_RUN,
                            **_CONFIRM,
                        }
                    ),
                    "anyOf": [
                        {"required": ["workflow_id"]},
                        {"required": ["older_than_days"]},
                        {"required": ["input_keys"]},
                        {"required": ["all"], "properties": {"all": {"const": True}}},
                    ],
                },
                self._purge,
                False,
            ),
            (
                "workflow.list_runs",
                "safe",
                "Find runs (the caller's own; an admin's: everyone's): filter by workflow_id, "
                "status (one or a list), owner, trigger (schedule, webhook, manual), "
                "trigger_name, since/until (created), ended_after/ended_before, params and "
                "output (name → value: a top-level param or output compared as text), error (a "
                "part of the error message, any case); sort (-created_at, created_at, "
                "-finished_at, finished_at); limit; cursor (next_cursor of the page before).",
                object_schema({**_RUN_FILTER, **_PAGING}),
                self._list_runs,
                False,
            ),
            (
                "workflow.run_stats",
                "safe",
                "Count runs created in a time range (default: the last 24 hours) by status, by "
                "workflow and per time bucket (bucket: seconds; default from the range). Takes "
                "workflow.list_runs's filters.",
                object_schema(
                    {
                        **_RUN_FILTER,
                        "bucket": {"type": "integer", "minimum": 60, "maximum": 366 * 86400},
                    }
                ),
                self._run_stats,
                False,
            ),
            (
                "workflow.cancel_runs",
                "destructive",
                "Cancel every run that has not ended among those the filters (as "
                "workflow.list_runs's) match, or among run_ids: at most 500 per call. Reports "
                "each run: cancelled, skipped (why) or failed. The user is asked to confirm "
                "when the client can; otherwise the answer is a preview and a "
                "confirmation_token to call again with. dry_run=true only counts.",
                object_schema({**_RUN_FILTER, **_BULK, "dry_run": DRY_RUN, **_CONFIRM}),
                lambda args: self._bulk("cancel", args),
                False,
            ),
            (
                "workflow.redrive_runs",
                "destructive",
                "Redrive every failed or cancelled run among those the filters match, or among "
                "run_ids (at most 500 per call): a new run each, reusing the outputs of the "
                "nodes that succeeded. Reports each run: redriven (new_run_id), skipped (why) "
                "or failed. Confirmed as workflow.cancel_runs is; dry_run=true only counts.",
                object_schema(
                    {
                        **_RUN_FILTER,
                        **_BULK,
                        "allow_changed_document": {"type": "boolean", "default": False},
                        "dry_run": DRY_RUN,
                        **_CONFIRM,
                    }
                ),
                lambda args: self._bulk("redrive", args),
                False,
            ),
        ]
        for name, safety, description, schema, operation, changes in specs:
            aliases, one_of = _ALIASES.get(name, ((), ()))
            if name == "workflow.cancel":  # a task id stands for its run
                aliases = (Alias(OPERATION.name, OPERATION.target, self._run_of),)
            operation = with_aliases(name, operation, aliases, one_of=one_of)
            tool = safety_tool(
                name,
                safety,
                description,
                schema,
                execution=types.ToolExecution(task_support="optional")
                if name == "workflow.run"
                else None,
            )
            starter = self._start_run if name == "workflow.run" else None
            previews: dict[str, Operation] = {
                "workflow.delete": self._preview_delete,
                "workflow.cancel": self._preview_cancel,
                "workflow.purge_history": self._preview_purge,
                "workflow.cancel_runs": lambda args: self._preview_bulk("cancel", args),
                "workflow.redrive_runs": lambda args: self._preview_bulk("redrive", args),
            }
            preview = previews.get(name)
            view.add(
                ToolEntry(
                    tool,
                    "authoring",
                    operation_handler(operation, changes_tools=changes),
                    start_task=starter,
                    preview=None
                    if preview is None
                    else with_aliases(name, preview, aliases, one_of=one_of),
                )
            )

    # --- operations ------------------------------------------------------------------------
    async def _list(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "workflows": [
                {**w.model_dump(), "path": self._path(w.file)} for w in self.workflows.list()
            ]
        }

    def _path(self, file: str) -> str:
        return str(self.workflows.directory / file)

    async def _get(self, args: dict[str, Any]) -> dict[str, Any]:
        data = self.workflows.get(str(args["workflow_id"]))
        return {
            "workflow_id": data.id,
            "path": self._path(data.file),
            "format": data.format,
            "content": data.content,
            "parsed": data.parsed,
            "version": data.version,
            "violations": [v.model_dump() for v in data.violations],
        }

    async def _validate(self, args: dict[str, Any]) -> dict[str, Any]:
        violations = await self.workflows.check(str(args["content"]), args.get("format"))
        errors = errors_only(violations)
        warnings = [v for v in violations if v.get("severity") == "warning"]
        return {
            "valid": not errors,
            "errors": errors,
            "warnings": warnings,
            "violations": violations,
        }

    async def _save(self, args: dict[str, Any]) -> dict[str, Any]:
        saved = await self.workflows.save_checked(
            args.get("workflow_id"),
            str(args["content"]),
            args.get("format"),
            expected_version=args.get("expected_version"),
            overwrite=bool(args.get("overwrite", False)),
        )
        ids = list(saved.workflows)
        workflow_id = args.get("workflow_id") if args.get("workflow_id") in ids else None
        return {
            **saved.model_dump(),
            "path": self._path(saved.file),
            "workflow_id": workflow_id or (ids[0] if ids else None),
        }

    async def _rename(self, args: dict[str, Any]) -> dict[str, Any]:
        renamed = await asyncio.to_thread(
            self.workflows.rename,
            str(args["workflow_id"]),
            str(args["new_id"]),
            expected_version=args.get("expected_version"),
        )
        return {
            **renamed.model_dump(),
            "workflow_id": renamed.id,
            "path": self._path(renamed.file),
        }

    async def _delete(self, args: dict[str, Any]) -> dict[str, Any]:
        deleted = await asyncio.to_thread(
            self.workflows.delete,
            str(args["workflow_id"]),
            expected_version=args.get("expected_version"),
        )
        return {**deleted.model_dump(), "deleted": True, "path": self._path(deleted.file)}

    async def _run(self, args: dict[str, Any], view: SessionView) -> dict[str, Any]:
        target = await self.authoring.checked_target(
            workflow_id=args.get("workflow_id"),
            content=args.get("content"),
            fmt=args.get("format"),
            runnable_only=True,
        )
        if args.get("content") is not None:  # a draft the client's model wrote: safe by default
            target = replace(target, scope=view.composed_scope())
        inputs = dict(args.get("inputs") or {})
        run = await self.authoring.run(target, inputs, principal=current_principal())
        warn_left_out("workflow.run", target)
        started = {"run_id": run.run_id, "workflow_id": run.workflow_id, "status": run.status}
        return {**started, "left_out": list(target.left_out)} if target.left_out else started

    async def _redrive(self, args: dict[str, Any]) -> dict[str, Any]:
        old = str(args["run_id"])
        allow = bool(args.get("allow_changed_document", False))
        if args.get("dry_run"):
            preview = await self.runs.preview_redrive(
                old, principal=current_principal(), allow_changed_document=allow
            )
            return {
                "dry_run": True,
                "redrive_of": old,
                "reused": list(preview.outputs),
                "runs_again": preview.runs_again,
            }
        run, plan = await self.runs.redrive(
            old, principal=current_principal(), allow_changed_document=allow
        )
        return {
            "run_id": run.run_id,
            "workflow_id": run.workflow_id,
            "status": run.status,
            "redrive_of": old,
            "reused": list(plan.outputs),
            "runs_again": plan.runs_again,
        }

    async def _start_run(self, call: ToolCall) -> str:
        """``workflow.run`` as a task: the task is the run."""
        aliases, one_of = _ALIASES["workflow.run"]
        arguments = apply_aliases("workflow.run", call.arguments, aliases, one_of=one_of)
        return str((await self._run(arguments, call.view))["run_id"])

    def _run_of(self, operation_id: str) -> str:
        """The run an ``operation_id`` names: a run id, or a task id (its run)."""
        run_id = self.tasks.run_of(operation_id) if self.tasks is not None else None
        return run_id or operation_id

    async def _cancel(self, args: dict[str, Any]) -> dict[str, Any]:
        run_id = str(args["run_id"])
        if self.tasks is not None and await self.tasks.cancel_job(run_id):  # a task before its run
            return {"operation_id": run_id, "run_id": None, "status": "cancelled"}
        run = await self.runs.cancel(run_id, principal=current_principal())
        return {"run_id": run.run_id, "status": run.status, "cancelled": True}

    async def _list_runs(self, args: dict[str, Any]) -> dict[str, Any]:
        run_filter, paging = self._filter(args)
        found, next_cursor, total, exact = await self.runs.store.search(run_filter, paging)
        return {
            "runs": [run.summary() for run in found],
            "next_cursor": next_cursor,
            "total": total,
            "total_exact": exact,
        }

    async def _run_stats(self, args: dict[str, Any]) -> dict[str, Any]:
        run_filter, paging = self._filter(args)
        ranged, bucket = stats_range(run_filter, paging.bucket, utc_now())
        return (await self.runs.store.stats(ranged, bucket)).to_dict()

    def _filter(self, args: dict[str, Any]) -> tuple[RunFilter, Paging]:
        """The run search of these arguments; a principal not admin sees their own runs."""
        run_filter, paging = filter_from_arguments(args)
        own = visible_to(current_principal())
        return (run_filter if own is None else replace(run_filter, owner=own)), paging

    async def _bulk(
        self, action: BulkAction, args: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        plain = {k: v for k, v in args.items() if k not in ("run_ids", "allow_changed_document")}
        run_filter, _ = self._filter(plain)
        if args.get("run_ids"):
            run_filter = replace(run_filter, run_ids=tuple(map(str, args["run_ids"])))
        report = await bulk_act(
            self.runs,
            action,
            run_filter,
            principal=current_principal(),
            dry_run=dry_run,
            allow_changed_document=bool(args.get("allow_changed_document", False)),
        )
        return _json(report)

    async def _purge(self, args: dict[str, Any]) -> dict[str, Any]:
        return _json(await self.authoring.purge_history(**_purge_scope(args)))

    # --- what a destructive call would remove (confirmation.py) -----------------------------
    async def _preview_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        workflow_id = str(args["workflow_id"])
        found = next((w for w in self.workflows.list() if w.id == workflow_id), None)
        if found is None:
            self.workflows.get(workflow_id)  # NotFoundError, as the delete would say
            raise NotFoundError(f"workflow '{workflow_id}' does not exist")
        siblings = [w.id for w in self.workflows.list() if w.file == found.file]
        alone = len(siblings) == 1
        where = (
            f"the file {found.file}, which holds only it, is removed"
            if alone
            else f"its entry is removed from {found.file}, which keeps "
            + ", ".join(s for s in siblings if s != workflow_id)
        )
        return {
            "summary": f"Delete the saved workflow '{workflow_id}': {where}.",
            "workflow_id": workflow_id,
            "file": found.file,
            "file_removed": alone,
            "version": found.version,
        }

    async def _preview_cancel(self, args: dict[str, Any]) -> dict[str, Any]:
        run_id = str(args["run_id"])
        try:
            run = await self.runs.get(run_id, principal=current_principal())
        except NotFoundError:
            state = None if self.tasks is None else await self.tasks.task_state(run_id)
            if state == "drafting":  # a task still drafting its workflow: no run yet
                return {
                    "summary": f"Cancel the MCP task '{run_id}' before its run starts.",
                    "operation_id": run_id,
                }
            if state == "ended":
                raise ConflictError(
                    f"task '{run_id}' has already ended: there is nothing to cancel",
                    context={"task_id": run_id},
                    kind=ConflictKind.RUN_ENDED,
                ) from None
            raise
        if run.terminal:
            raise ConflictError(
                f"run '{run.run_id}' has already ended ({run.status}): there is nothing to cancel",
                context={"run_id": run.run_id, "status": run.status},
                kind=ConflictKind.RUN_ENDED,
            )
        return {
            "summary": f"Cancel run '{run.run_id}' of workflow '{run.workflow_id}' "
            f"({run.status}): its running steps stop and the compensations of its completed "
            "steps run.",
            "run_id": run.run_id,
            "workflow_id": run.workflow_id,
            "status": run.status,
        }

    async def _preview_purge(self, args: dict[str, Any]) -> dict[str, Any]:
        counted = _json(await self.authoring.purge_history(**_purge_scope(args), dry_run=True))
        count, by_workflow = counted["would_remove_runs"], counted["by_workflow"]
        detail = ", ".join(f"{w}: {n}" for w, n in by_workflow.items()) or "none"
        return {
            "summary": f"Delete {count} ended run(s) and their events ({detail}).",
            **counted,
        }

    async def _preview_bulk(self, action: BulkAction, args: dict[str, Any]) -> dict[str, Any]:
        report = await self._bulk(action, args, dry_run=True)
        what = "that have not ended" if action == "cancel" else "failed or cancelled"
        detail = "; ".join(f"{k}={v}" for k, v in report["filter"].items()) or "no filter"
        return {
            "summary": f"{action.capitalize()} {report['matched']} run(s) {what} ({detail}).",
            **report,
        }


def _purge_scope(args: dict[str, Any]) -> dict[str, Any]:
    """The scope of a purge; one of its parts must be given (``all=true`` for everything)."""
    scope = {
        "workflow_id": args.get("workflow_id"),
        "older_than_days": args.get("older_than_days"),
        "input_keys": args.get("input_keys"),
    }
    if all(v is None for v in scope.values()) and args.get("all") is not True:
        raise InvalidInputError(
            "workflow.purge_history needs a scope: workflow_id, older_than_days, input_keys, "
            "or all=true for every ended run",
            violations=[
                {
                    "path": "workflow_id",
                    "rule": "scope",
                    "message": "give workflow_id, older_than_days, input_keys or all=true",
                }
            ],
        )
    return scope


_CONTENT_TOOLS = (
    "workflow.validate",
    "workflow.preview_inputs",
    "workflow.preview_rendered",
    "workflow.step_plan",
    "workflow.resolve_inputs",
    "workflow.run",
)
# tool → (aliases, groups of which one argument is required)
_ALIASES: dict[str, tuple[tuple[Alias, ...], tuple[tuple[str, ...], ...]]] = {
    **{name: ((MANIFEST,), ()) for name in _CONTENT_TOOLS},
    "workflow.validate": ((MANIFEST,), (("content", "manifest"),)),
    "workflow.save": ((MANIFEST, VERSION), (("content", "manifest"),)),
    "workflow.cancel": ((), (("run_id", "operation_id"),)),  # operation_id: see add_to
}


def warn_left_out(tool: str, target: Target) -> None:
    """Log a warning per workflow of a draft a run went on without (it does not validate)."""
    for problem in target.left_out:
        logger.bind(tool=tool, workflow=problem["workflow"]).warning(
            "{}: workflow '{}' of the draft is left out: {}",
            tool,
            problem["workflow"],
            "; ".join(str(v.get("message", "")) for v in problem["violations"])[:500],
        )


async def _on_target(
    authoring: WorkflowAuthoring, args: dict[str, Any], work: Callable[[Any], dict[str, Any]]
) -> dict[str, Any]:
    target = await authoring.checked_target(
        workflow_id=args.get("workflow_id"), content=args.get("content"), fmt=args.get("format")
    )
    return work(target)


def _json(view: BaseModel) -> dict[str, Any]:
    """A service's view as the JSON an MCP tool answers."""
    return view.model_dump(mode="json", by_alias=True)
