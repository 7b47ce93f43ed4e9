"""The task flows, as task-required tools (``execution.taskSupport: required``).

The tools are ``workflow.execute``, ``workflow.author_and_run`` and ``workflow.repair_and_rerun``.

Called without ``params.task`` they fail fast with ``TASK_CAPABILITY_REQUIRED``, never
falling back to a synchronous run. Drafting uses MCP sampling when the client offers it, else
the server's LLM, else fails with a clear error; every draft is validated, and a draft that
does not validate is repaired (up to ``MAX_REPAIRS`` rounds) before anything is saved.

What a model wrote runs safe by default (``tools/safety.py``): a draft ``workflow.execute`` is
given as ``content``, and the run that ``workflow.author_and_run`` / ``workflow.repair_and_rerun``
start right after saving their draft, refuse calls that change things unless the session's
``X-Allow-Unsafe-Paths`` allows them.

Inputs the saved workflow still needs are asked for with an elicitation form built from its
params (as a ``yield`` is) when the client declared elicitation; the task fails with the list of
what is missing only when it cannot ask (no elicitation, a secret-looking param, or the user
declines). The task's client requests travel over its ``tasks/result`` stream
(:mod:`dynamic_tools.mcp.tasks.link`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import mcp_types as types

from dynamic_tools.definitions.authoring import Target, WorkflowAuthoring
from dynamic_tools.engine.models import ParamSpec
from dynamic_tools.errors import ConfigurationError, InvalidInputError, WorkflowInvalidError
from dynamic_tools.execution.runs import visible_to
from dynamic_tools.mcp.aliases import alias_property, apply_aliases
from dynamic_tools.mcp.authoring_tools import ANNOTATIONS, MANIFEST, SAFETY_KEY, warn_left_out
from dynamic_tools.mcp.channel import ClientRequestTimeout
from dynamic_tools.mcp.entries import Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.errors import TaskCapabilityRequired, error_result
from dynamic_tools.mcp.prompts import AuthoringPrompts
from dynamic_tools.mcp.workflow_tools import elicitation_schema
from dynamic_tools.persistence.run_view import RunRecord, error_summary
from dynamic_tools.selection.llm import LLMClient
from dynamic_tools.selection.pipeline import LLM_SETTINGS
from dynamic_tools.violations import errors_only

MAX_REPAIRS = 3
#: the task-required tools this module offers (always a task; 2026-07-28 decides by name first)
TASK_TOOLS = frozenset({"workflow.execute", "workflow.author_and_run", "workflow.repair_and_rerun"})
MAX_ASKS = 3  # elicitation rounds for missing inputs
_SECRET_NAME = re.compile(r"pass(word)?|secret|token|api[_-]?key|credential", re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*\n(.*?)```", re.DOTALL)
_INPUTS = {"type": "object", "description": "Input values by param name.", "default": {}}
_CONTENT = {"type": "string", "description": "A workflow document (a draft)."}


def task_required_result(name: str) -> types.CallToolResult:
    """The error for a task-required tool called without task support."""
    return error_result(
        TaskCapabilityRequired(
            f"'{name}' runs as an MCP task: call it with params.task (MCP Tasks, 2025-11-25), "
            "or declare the io.modelcontextprotocol/tasks extension (2026-07-28); it is never "
            "run synchronously because long runs would time out",
            context={"tool": name},
            suggestion="Connect with a tasks-capable MCP client and call the tool as a task, "
            "or use w_<workflow_id> / workflow.run instead.",
        )
    )


def _tool(name: str, description: str, schema: dict[str, Any]) -> types.Tool:
    return types.Tool(
        name=name,
        description=f"[standard, task] {description}",
        input_schema=schema,
        annotations=ANNOTATIONS["standard"],
        execution=types.ToolExecution(task_support="required"),
        meta={SAFETY_KEY: "standard"},
    )


class TaskFlows:
    """The three task-required tools over the authoring service and a drafting model."""

    def __init__(
        self, authoring: WorkflowAuthoring, prompts: AuthoringPrompts, llm: LLMClient | None
    ) -> None:
        self.authoring = authoring
        self.prompts = prompts
        self.llm = llm

    def add_to(self, view: SessionView) -> None:
        """Offer the three tools in ``view``."""
        view.add(
            ToolEntry(
                _tool(
                    "workflow.execute",
                    "Run a saved workflow (or a draft) as a task: poll tasks/get for the step "
                    "status, tasks/result for the outcome; a yield asks you through elicitation.",
                    {
                        "type": "object",
                        "properties": {
                            "workflow_id": {"type": "string"},
                            "content": _CONTENT,
                            "manifest": alias_property(MANIFEST, _CONTENT),
                            "inputs": _INPUTS,
                        },
                        "additionalProperties": False,
                    },
                ),
                "task",
                _refuse("workflow.execute"),
                start_task=self._execute,
            )
        )
        view.add(
            ToolEntry(
                _tool(
                    "workflow.author_and_run",
                    "From a goal in words: draft a workflow, validate and repair it, save it, "
                    "then run it with the inputs, as one task.",
                    {
                        "type": "object",
                        "properties": {
                            "goal": {"type": "string", "minLength": 1},
                            "inputs": _INPUTS,
                            "constraints": {"type": "string"},
                        },
                        "required": ["goal"],
                        "additionalProperties": False,
                    },
                ),
                "task",
                _refuse("workflow.author_and_run"),
                start_job=self._author_and_run,
            )
        )
        view.add(
            ToolEntry(
                _tool(
                    "workflow.repair_and_rerun",
                    "Take a failed run: repair its workflow from the failure (validated), save "
                    "it, and run it again, as one task. The re-run takes the failed run's "
                    "inputs, except where the repair changed a param's default (the repaired "
                    "default is used) and except the values given in 'inputs'.",
                    {
                        "type": "object",
                        "properties": {
                            "run_id": {"type": "string", "minLength": 1},
                            "inputs": {
                                **_INPUTS,
                                "description": "Input values for the re-run, by param name "
                                "(over the failed run's and the repaired defaults).",
                            },
                        },
                        "required": ["run_id"],
                        "additionalProperties": False,
                    },
                ),
                "task",
                _refuse("workflow.repair_and_rerun"),
                start_job=self._repair_and_rerun,
            )
        )

    # --- flows -----------------------------------------------------------------------------
    async def _execute(self, call: ToolCall) -> str:
        # ``manifest`` is the design's name for ``content``, as on workflow.run
        args = apply_aliases("workflow.execute", call.arguments, (MANIFEST,))
        target = await self.authoring.checked_target(
            workflow_id=args.get("workflow_id"), content=args.get("content"), runnable_only=True
        )
        if args.get("content") is not None:  # a draft the client's model wrote: safe by default
            target = replace(target, scope=call.view.composed_scope())
        inputs = dict(args.get("inputs") or {})
        run = await self.authoring.run(target, inputs, principal=call.channel.principal)
        warn_left_out("workflow.execute", target)
        return run.run_id

    async def _author_and_run(self, call: ToolCall, job: Any) -> str:
        args = call.arguments
        await job.set_stage("drafting")
        content = await self.draft_valid(
            call, str(args["goal"]), str(args.get("constraints") or ""), job=job
        )
        await job.set_stage("saving")
        saved = await self.authoring.workflows.save_checked(None, content)
        target = self._drafted(call, saved.workflows[0])
        return await self._start(call, job, target, dict(args.get("inputs") or {}))

    async def draft_valid(
        self, call: ToolCall, goal: str, constraints: str = "", *, job: Any = None
    ) -> str:
        """A workflow document drafted for ``goal`` that validates; nothing is saved.

        A draft that does not validate is repaired up to ``MAX_REPAIRS`` rounds; ``job`` (a
        task's) is told each stage.

        Raises:
            ConfigurationError: no model to draft with (no sampling, no server LLM).
            WorkflowInvalidError: the draft still does not validate after the repairs.
        """
        prompt = self.prompts.get(
            call.view, "workflow.author", {"goal": goal, "constraints": constraints}
        )
        draft = await self._draft(call, _text(prompt))
        return await self._until_valid(call, job or _NoStages(), draft)

    async def _repair_and_rerun(self, call: ToolCall, job: Any) -> str:
        run = await self.authoring.store.get_run(
            str(call.arguments["run_id"]), visible_to=visible_to(call.channel.principal)
        )
        if run.status != "failed":
            raise InvalidInputError(
                f"run '{run.run_id}' is {run.status}; only a failed run can be repaired",
                violations=[{"path": "run_id", "rule": "status", "message": run.status}],
            )
        current = self.authoring.workflows.get(run.workflow_id)
        before = self.authoring.target(workflow_id=run.workflow_id, content=None)
        await job.set_stage("repairing")
        violations = await self.authoring.workflows.check(current.content)
        errors = errors_only(violations)
        arguments = {"content": current.content}
        if errors:  # the saved document no longer validates (a tool changed, say)
            arguments["violations"] = json.dumps(errors, indent=1, default=str)
        else:
            arguments["failure"] = _execution_failure(run, before.workflow.params)
        prompt = self.prompts.get(call.view, "workflow.fix_validation", arguments)
        draft = await self._draft(call, _text(prompt))
        content = await self._until_valid(call, job, draft)
        await job.set_stage("saving")
        await self.authoring.workflows.save_checked(
            run.workflow_id, content, expected_version=current.version
        )
        target = self._drafted(call, run.workflow_id)
        inputs = _rerun_inputs(before.workflow.params, target.workflow.params, dict(run.params))
        return await self._start(
            call, job, target, {**inputs, **(call.arguments.get("inputs") or {})}
        )

    def _drafted(self, call: ToolCall, workflow_id: str) -> Target:
        """The saved workflow a model just drafted: its first run is held to the safe rule.

        Nobody has read it yet, so this run's calls are model-composed (``tools/safety.py``);
        later runs of the saved workflow keep what it declares.
        """
        target = self.authoring.target(workflow_id=workflow_id, content=None)
        return replace(target, scope=call.view.composed_scope())

    async def _start(self, call: ToolCall, job: Any, target: Target, inputs: dict[str, Any]) -> str:
        """Start the saved workflow's run; missing inputs are asked for when the client can."""
        resolved = await self._inputs(call, job, target, inputs)
        await job.set_stage("starting the run")
        started = self.authoring.run(target, resolved, principal=call.channel.principal)
        return str(await job.start_run(started))

    async def _inputs(
        self, call: ToolCall, job: Any, target: Target, inputs: dict[str, Any]
    ) -> dict[str, Any]:
        """The run's inputs: given, defaulted, or asked through an elicitation form."""
        note = ""
        for asked in range(MAX_ASKS + 1):  # the last round only checks the last answer
            resolution = self.authoring.resolve_inputs(target, inputs)
            if resolution.ready:
                return dict(resolution.resolved)
            missing = [n for n, o in resolution.inputs.items() if o.outcome in ("prompt", "error")]
            if asked == MAX_ASKS:
                break
            secret = [n for n in missing if _secret_like(n, target.workflow.params[n])]
            if call.channel.elicit is None or secret:
                why = (
                    f"inputs that look like secrets ({', '.join(secret)}) are never asked in a form"
                    if secret
                    else "the client offers no elicitation to ask for them"
                )
                raise _missing_inputs(target, missing, f"; {why}: pass them in 'inputs'")
            await job.set_stage("asking for inputs: " + ", ".join(missing))
            specs = {n: target.workflow.params[n].model_dump(exclude_none=True) for n in missing}
            message = (
                f"The workflow '{target.workflow_id}' needs "
                + ("these inputs" if len(missing) > 1 else "this input")
                + " to run: "
                + ", ".join(missing)
                + note
            )
            answer = await call.channel.elicit(message, elicitation_schema(specs))
            if answer.action != "accept":
                raise _missing_inputs(target, missing, f"; the user chose '{answer.action}'")
            given = dict(answer.content or {})
            inputs = {**inputs, **given}
            note = "\n(The last answer was not accepted; check the values.)"
        raise _missing_inputs(target, missing, f" (still missing or invalid after {MAX_ASKS} asks)")

    async def _until_valid(self, call: ToolCall, job: Any, draft: str) -> str:
        for round_number in range(1, MAX_REPAIRS + 1):
            violations = await self.authoring.workflows.check(draft)
            errors = errors_only(violations)
            if not errors:
                return draft
            await job.set_stage(f"repairing (round {round_number})")
            prompt = self.prompts.get(
                call.view, "workflow.fix_validation", {"content": draft, "violations": str(errors)}
            )
            draft = await self._draft(call, _text(prompt))
        violations = await self.authoring.workflows.check(draft)
        if errors_only(violations):
            raise WorkflowInvalidError(
                f"the draft still does not validate after {MAX_REPAIRS} repairs",
                violations=violations,
            )
        return draft

    async def _draft(self, call: ToolCall, prompt: str) -> str:
        """A model's answer: client sampling when offered, else the server's LLM."""
        if call.channel.sample is not None:
            try:
                return _extract(await call.channel.sample(prompt))
            except ClientRequestTimeout:
                raise  # the client declared sampling but never answered: the task fails
            except Exception:  # the client could not sample now: fall back to the server's LLM
                if self.llm is None:
                    raise
        if self.llm is None:
            raise ConfigurationError(
                "no model to draft with: the client offers no MCP sampling and the server has "
                "no LLM configured (set OPENAI_API_KEY or OPENAI_BASE_URL)",
                context={"settings": list(LLM_SETTINGS), "stage": "drafting"},
            )
        answer = await self.llm.complete([{"role": "user", "content": prompt}])
        return _extract(answer.content or "")


class _NoStages:
    """Stages told to nobody: a draft made outside a task (the planner's)."""

    async def set_stage(self, stage: str) -> None:
        """Nothing to tell."""


def _execution_failure(run: RunRecord, params: dict[str, ParamSpec]) -> str:
    """A failed run in words for the repair: where and why, then the run's inputs and steps.

    The first line is ``execution failed at node <id>: <the API's message>`` (the engine's
    message when no API answered); inputs that look like secrets are masked.
    """
    error = run.error or {}
    summary = error_summary(error) or {}
    failed = {n: s.error for n, s in run.nodes.items() if s.status == "failed"}
    node = summary.get("node_id") or next(iter(failed), None) or "(none)"
    said = summary.get("api_message") or summary.get("message") or "no message"
    status = summary.get("status_code")
    inputs = {
        name: "***" if _secret_like(name, params[name]) else value
        for name, value in run.params.items()
        if name in params
    }
    details = {
        "error": {k: v for k, v in error.items() if k != "body"},
        "http_status": status,
        "inputs": inputs,
        "failed_steps": failed,
    }
    return (
        f"execution failed at node {node}: {said}\n\n## Failure\n\n```json\n"
        + json.dumps(details, indent=1, default=str)
        + "\n```"
    )


def _rerun_inputs(
    before: dict[str, ParamSpec], after: dict[str, ParamSpec], used: dict[str, Any]
) -> dict[str, Any]:
    """The failed run's inputs the repaired document still accepts.

    A param the repair removed is dropped; so is the value of a param whose default the repair
    set or changed: that value is what failed, and the repaired default replaces it.
    """
    kept: dict[str, Any] = {}
    for name, value in used.items():
        spec = after.get(name)
        if spec is None:
            continue
        prior = before.get(name)
        if spec.default is not None and (prior is None or prior.default != spec.default):
            continue
        kept[name] = value
    return kept


def _missing_inputs(target: Target, missing: list[str], why: str) -> InvalidInputError:
    return InvalidInputError(
        f"workflow '{target.workflow_id}' was saved but needs inputs: {', '.join(missing)}{why}",
        violations=[
            {"path": f"inputs.{n}", "rule": "required", "message": "missing or invalid"}
            for n in missing
        ],
        context={"workflow_id": target.workflow_id},
    )


def _secret_like(name: str, spec: ParamSpec) -> bool:
    """A param a form must not ask for (a password, token, key or other credential)."""
    return spec.format == "password" or bool(_SECRET_NAME.search(name))


def _refuse(name: str) -> Any:
    async def handle(call: ToolCall) -> Result:
        return task_required_result(name)

    return handle


def _text(prompt: types.GetPromptResult) -> str:
    content = prompt.messages[0].content
    return str(getattr(content, "text", ""))


def _extract(answer: str) -> str:
    """The document in a model's answer (inside a code fence when there is one)."""
    fenced = _FENCE.search(answer)
    return (fenced.group(1) if fenced else answer).strip() + "\n"
