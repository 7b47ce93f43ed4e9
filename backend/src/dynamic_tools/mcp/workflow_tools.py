"""Layer 4: each workflow as ``w_<id>``, run on the engine, followed until it ends or waits.

A call starts a durable run and follows its events: a progress notification per finished
step (when the client sent a progress token), cancellation of the MCP request cancels the run
(compensations run), and the result comes back as structured content. A ``yield``:

- on a 2025-11-25 session whose client supports elicitation: an ``elicitation/create`` form
  (accept → the run resumes; decline → the run is cancelled; cancel, or no answer within
  ``MCP_CLIENT_REQUEST_TIMEOUT_S`` → the call returns the "waiting for input" result);
- on 2026-07-28: an ``InputRequiredResult`` carrying the form; the client's retry (with
  ``inputResponses`` and the echoed ``requestState``) resumes the run;
- otherwise: a structured "waiting for input" result with the run id, message and expected
  fields; ``workflow.resume(run_id, values)`` continues it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types

from dynamic_tools.access.principals import Principal
from dynamic_tools.definitions.repository import PreparedRun
from dynamic_tools.definitions.step_views import preview_inputs
from dynamic_tools.engine import events as ev
from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.nodes import CallSite, calls_reached
from dynamic_tools.engine.params import answer_specs, param_schema
from dynamic_tools.engine.state import NodeState
from dynamic_tools.errors import DynamicToolsError, InvalidInputError
from dynamic_tools.execution.runs import RunService
from dynamic_tools.mcp.channel import CallChannel, ClientRequestTimeout
from dynamic_tools.mcp.errors import (
    WorkflowCancelled,
    WorkflowFailed,
    error_result,
    invalid_params,
)
from dynamic_tools.mcp.results import data_result
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.persistence.run_view import RunRecord
from dynamic_tools.redaction import redactor
from dynamic_tools.tools.models import ToolConfig

#: a node's statuses once it ended
NODE_ENDS = frozenset({"succeeded", "failed", "skipped", "not_run"})
MAX_ELICIT_ROUNDS = 3
FORM_TYPES = frozenset({"string", "integer", "number", "boolean"})
FORM_FORMATS = frozenset({"date", "date-time", "email", "uri"})
YIELD_KEY = "workflow_yield"
MAX_HINTED_OPTIONS = 20  # options a "waiting for input" text lists (all are in its data)
MAX_RESPONSE_PAYLOAD = 8000  # characters of JSON an error shows of an API response body

RUN_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "run_id": {"type": "string"},
        "workflow_id": {"type": "string"},
        "status": {"type": "string", "enum": ["succeeded", "waiting_input"]},
        "result": {},
        "waiting": {"type": ["object", "null"]},
        "resume_with": {"type": "string"},
    },
    "required": ["run_id", "status"],
}


def workflow_input_schema(workflow: Workflow) -> dict[str, Any]:
    """The ``w_<id>`` input schema: one property per param."""
    schema: dict[str, Any] = preview_inputs(workflow)["schema"]
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


@dataclass(frozen=True)
class CallEffect:
    """What one call does to the world, as MCP's behaviour hints say it."""

    read_only: bool
    destructive: bool
    idempotent: bool


READ_ONLY = CallEffect(read_only=True, destructive=False, idempotent=True)
UNKNOWN = CallEffect(read_only=False, destructive=True, idempotent=False)
"""A call whose tool (or sub-workflow) is not known: assumed to change and destroy."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_METHOD_EFFECTS = {
    "POST": CallEffect(read_only=False, destructive=False, idempotent=False),
    "PUT": CallEffect(read_only=False, destructive=True, idempotent=True),
    "PATCH": CallEffect(read_only=False, destructive=True, idempotent=False),
    "DELETE": CallEffect(read_only=False, destructive=True, idempotent=True),
}


def call_effect(
    site: CallSite,
    tools: Mapping[str, ToolConfig],
    *,
    query: str,
    query_choices: Sequence[ToolConfig],
) -> CallEffect:
    """The effect of one call a workflow makes (README, "What a client sees": layer 4).

    - ``sql_query`` runs in memory over the run's outputs: read-only;
    - ``query`` (the session's ``{prefix}_query``) has the effect of the operations it may
      choose from (``query_choices``: safe ones unless ``X-Allow-Unsafe-Paths`` allows more);
    - ``rest_call`` follows its written ``method`` (an expression: unknown);
    - a tool of the session or the registry: its annotations (set, or derived from its
      method, as its own listing shows them);
    - anything else (an unknown tool, a sub-workflow that cannot be read): unknown.
    """
    tool = site.tool
    if tool is None:
        return UNKNOWN
    if tool == "sql_query":
        return READ_ONLY
    if tool == query:
        return combined([tool_effect(choice) for choice in query_choices])
    if tool == "rest_call":
        method = site.args.get("method")
        if not isinstance(method, str):
            return UNKNOWN
        method = method.upper()
        return READ_ONLY if method in SAFE_METHODS else _METHOD_EFFECTS.get(method, UNKNOWN)
    config = tools.get(tool)
    return UNKNOWN if config is None else tool_effect(config)


def tool_effect(config: ToolConfig) -> CallEffect:
    """A tool's effect: its annotations, set or derived from its method."""
    a = config.effective_annotations
    read_only = bool(a.read_only)
    return CallEffect(
        read_only=read_only,
        destructive=bool(a.destructive) and not read_only,
        idempotent=read_only or bool(a.idempotent),
    )


def combined(effects: Sequence[CallEffect]) -> CallEffect:
    """The effect of making all ``effects``' calls (none: read-only)."""
    read_only = all(e.read_only for e in effects)
    return CallEffect(
        read_only=read_only,
        destructive=not read_only and any(e.destructive for e in effects),
        idempotent=all(e.idempotent for e in effects),
    )


def workflow_annotations(
    workflow_id: str,
    workflows: Mapping[str, Workflow],
    effect_of: Callable[[CallSite], CallEffect],
) -> types.ToolAnnotations:
    """The ``w_<id>`` hints, from every call the workflow reaches (sub-workflows included).

    Read-only when every call is; destructive when any call may be; idempotent when every
    call is. A pause for input, a branch or an error adds nothing; a workflow that calls
    nothing is read-only.
    """
    effect = combined([effect_of(site) for site in calls_reached(workflow_id, workflows)])
    return types.ToolAnnotations(
        read_only_hint=effect.read_only,
        destructive_hint=effect.destructive,
        idempotent_hint=effect.idempotent,
        open_world_hint=True,
    )


def elicitation_schema(expects: dict[str, Any]) -> dict[str, Any]:
    """A flat form schema (primitives only) from a yield's ``expects``.

    A field with offered ``options`` of strings is a titled single select (``oneOf`` of
    ``const`` and ``title``); other options are an ``enum`` of their values.
    """
    properties: dict[str, Any] = {}
    required = []
    for name, spec in answer_specs(expects).items():
        full = param_schema(spec)  # the JSON Schema of the param; forms take primitives only
        kind = full.get("type")
        prop: dict[str, Any] = {"type": kind if kind in FORM_TYPES else "string", "title": name}
        prop.update({k: full[k] for k in ("description", "enum", "default") if k in full})
        if full.get("format") in FORM_FORMATS:
            prop["format"] = full["format"]
        options = expects[name].get("options") if isinstance(expects[name], dict) else None
        if options and all(isinstance(o.get("value"), str) for o in options):
            prop.pop("enum", None)
            prop["type"] = "string"
            prop["oneOf"] = [{"const": o["value"], "title": o["label"]} for o in options]
        properties[name] = prop
        if spec.required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


class WorkflowCalls:
    """Starts, resumes and follows runs for MCP tool calls."""

    def __init__(self, runs: RunService, store: RunStore) -> None:
        self.runs = runs
        self.store = store

    async def start(
        self, workflow_id: str, params: dict[str, Any], channel: CallChannel
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Start ``workflow_id`` (or, on a retry with input responses, resume its run)."""
        if channel.modern and channel.request_state:
            return await self._continue_from_state(channel, workflow_id)
        try:
            run = await self.runs.start(workflow_id, params, principal=channel.principal)
        except DynamicToolsError as exc:
            return error_result(exc)
        return await self.follow(run.run_id, channel, after=0)

    async def start_prepared(
        self, prepared: PreparedRun, channel: CallChannel
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Start a checked run of a session's own document (or continue it on a retry)."""
        if channel.modern and channel.request_state:
            return await self._continue_from_state(channel, prepared.workflow_id)
        try:
            run = await self.runs.start_prepared(prepared, principal=channel.principal)
        except DynamicToolsError as exc:
            return error_result(exc)
        return await self.follow(run.run_id, channel, after=0)

    async def resume(
        self, run_id: str, values: dict[str, Any], node_id: str | None, channel: CallChannel
    ) -> types.CallToolResult | types.InputRequiredResult:
        """``workflow.resume``: answer the waiting yield, then follow the run."""
        if channel.modern and channel.request_state:
            return await self._continue_from_state(channel, None)
        try:
            before = await self.runs.get(run_id, principal=channel.principal)
            await self.runs.resume(run_id, values, node_id, principal=channel.principal)
        except DynamicToolsError as exc:
            return error_result(exc)
        return await self.follow(run_id, channel, after=before.event_count)

    async def _continue_from_state(
        self, channel: CallChannel, workflow_id: str | None
    ) -> types.CallToolResult | types.InputRequiredResult:
        """A 2026-07-28 retry: the echoed state names the run; the responses answer its yield."""
        try:
            state = json.loads(channel.request_state or "")
            run_id, node_id = str(state["run_id"]), str(state["node_id"])
        except (ValueError, KeyError, TypeError, RecursionError):  # a request error (-32602)
            raise invalid_params(
                InvalidInputError(
                    "requestState is not one this server issued",
                    violations=[{"path": "requestState", "rule": "format", "message": "unknown"}],
                )
            ) from None
        try:
            run = await self.runs.get(run_id, principal=channel.principal)
            if workflow_id is not None and run.workflow_id != workflow_id:
                raise invalid_params(
                    InvalidInputError(
                        f"requestState belongs to a run of '{run.workflow_id}', not "
                        f"'{workflow_id}'",
                        violations=[
                            {"path": "requestState", "rule": "run", "message": "wrong run"}
                        ],
                    )
                )
            answer = (channel.input_responses or {}).get(YIELD_KEY)
            if _action(answer) == "decline":  # as on 2025-11-25: declining cancels the run
                await self._cancel_quietly(run.run_id, channel.principal)
                return run_result(await self.store.get_run(run.run_id), declined=node_id)
            content = _elicit_content(answer)
            if content is None:  # dismissed (cancel) or not answered: the run stays waiting
                return waiting_result(run)
            await self.runs.resume(run_id, content, node_id, principal=channel.principal)
        except DynamicToolsError as exc:
            return error_result(exc)
        return await self.follow(run_id, channel, after=run.event_count)

    async def follow(
        self, run_id: str, channel: CallChannel, *, after: int
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Follow ``run_id``'s events from ``after`` until it ends or waits for input."""
        try:
            return await self._follow(run_id, channel, after)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel_quietly(run_id, channel.principal)
            raise

    async def _follow(
        self, run_id: str, channel: CallChannel, after: int
    ) -> types.CallToolResult | types.InputRequiredResult:
        run = await self.store.get_run(run_id)
        top_level = set(run.nodes)
        done = sum(1 for n in run.nodes.values() if n.status in NODE_ENDS)
        total = float(len(top_level)) or None
        position = after
        while True:
            async for event in self.store.subscribe(run_id, after=position):
                if event is None:
                    continue
                position = event.position
                typed = event.event
                ended = isinstance(typed, ev.NodeEvent) and typed.ENDS_NODE
                if ended and isinstance(typed, ev.NodeEvent) and typed.node_id in top_level:
                    done += 1
                    await channel.progress(float(done), total, f"{typed.node_id}: {ended}")
                if isinstance(typed, ev.WaitingInput | ev.RunEnded):
                    break
            run = await self.store.get_run(run_id)
            if run.terminal:
                return run_result(run)
            prompt = run.waiting_prompt()
            if prompt is None:  # the yield was answered meanwhile (another client)
                continue
            outcome = await self._ask(run, prompt, channel)
            if outcome is not None:
                return outcome

    async def _ask(
        self, run: RunRecord, prompt: dict[str, Any], channel: CallChannel
    ) -> types.CallToolResult | types.InputRequiredResult | None:
        """Get an answer for the waiting yield; None once the run took it."""
        message = str(prompt.get("message") or "The workflow needs your input.")
        schema = elicitation_schema(prompt.get("expects") or {})
        node_id = str(prompt["node_id"])
        if channel.modern:
            return types.InputRequiredResult(
                input_requests={
                    YIELD_KEY: types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=message, requested_schema=schema
                        )
                    )
                },
                request_state=json.dumps({"run_id": run.run_id, "node_id": node_id}),
            )
        if channel.elicit is None:
            return waiting_result(run)
        note = ""
        for _ in range(MAX_ELICIT_ROUNDS):
            try:
                answer = await channel.elicit(message + note, schema)
            except ClientRequestTimeout:
                if channel.task_id is not None:
                    raise  # a task fails (and its run ends) when its client never answers
                return waiting_result(run)  # the run keeps waiting for workflow.resume
            if answer.action == "decline":
                await self._cancel_quietly(run.run_id, channel.principal)
                final = await self.store.get_run(run.run_id)
                return run_result(final, declined=node_id)
            if answer.action != "accept":
                return waiting_result(run)
            try:
                answered = dict(answer.content or {})
                await self.runs.resume(run.run_id, answered, node_id, principal=channel.principal)
                return None
            except InvalidInputError as exc:
                why = "; ".join(f"{v['path']}: {v['message']}" for v in exc.violations)
                note = f"\n(Your last answer was not accepted: {why or exc.message})"
            except DynamicToolsError:
                return None  # answered elsewhere or no longer waiting: keep following
        return waiting_result(run)

    async def _cancel_quietly(self, run_id: str, principal: Principal) -> None:
        with contextlib.suppress(DynamicToolsError):  # already ended: nothing to cancel
            await self.runs.cancel(run_id, principal=principal)


def _action(answer: Any) -> str | None:
    """The action of an elicitation response (``accept``, ``decline``, ``cancel``), if any."""
    action = answer.get("action") if isinstance(answer, dict) else getattr(answer, "action", None)
    return action if isinstance(action, str) else None


def _elicit_content(answer: Any) -> dict[str, Any] | None:
    """The accepted form content of an elicitation response, else None."""
    if answer is None:
        return None
    if isinstance(answer, types.ElicitResult):
        data = answer.model_dump(by_alias=True, exclude_none=True)
    elif isinstance(answer, dict):
        data = answer
    else:
        data = getattr(answer, "model_dump", lambda **_: {})(by_alias=True, exclude_none=True)
    if data.get("action") != "accept":
        return None
    content = data.get("content") or {}
    return dict(content) if isinstance(content, dict) else None


def waiting_result(run: RunRecord) -> types.CallToolResult:
    """The structured "waiting for input" result (no elicitation available)."""
    prompt = run.waiting_prompt() or {}
    data = {
        "run_id": run.run_id,
        "workflow_id": run.workflow_id,
        "status": "waiting_input",
        "waiting": {
            "node_id": prompt.get("node_id"),
            "message": prompt.get("message"),
            "expects": prompt.get("expects") or {},
        },
        "resume_with": "workflow.resume",
    }
    text = (
        f"Run {run.run_id} is waiting for input at '{prompt.get('node_id')}': "
        f"{prompt.get('message')}\nAsk the user, then call workflow.resume with "
        f'{{"run_id": "{run.run_id}", "values": {{...}}}} giving: '
        + ", ".join(_field_hint(k, v) for k, v in (prompt.get("expects") or {}).items())
    )
    return data_result(data, text)


def _field_hint(name: str, shown: Any) -> str:
    """``selected_flight_id (str, one of: FL-1 = FL-1 at 120 EUR, …)`` for the result text."""
    if not isinstance(shown, dict):
        return f"{name} ({shown})"
    hint = str(shown.get("type", "any"))
    options = shown.get("options") or []
    if options:
        listed = "; ".join(f"{o['value']} = {o['label']}" for o in options[:MAX_HINTED_OPTIONS])
        more = len(options) - MAX_HINTED_OPTIONS
        hint += f", one of: {listed}" + (f"; and {more} more" if more > 0 else "")
    return f"{name} ({hint})"


def run_result(run: RunRecord, *, declined: str | None = None) -> types.CallToolResult:
    """The tool result of an ended run: the workflow result, or an execution error payload.

    A failure names the node (``step_id``), the tool its call used (``command``), the API's
    response body (``response_payload``, secrets redacted, long bodies cut) and the run.
    """
    if run.status == "succeeded":
        data = {
            "run_id": run.run_id,
            "workflow_id": run.workflow_id,
            "status": "succeeded",
            "result": run.result,
        }
        return data_result(data)
    error = run.error or {}
    step_id = error.get("node_id") or _failed_node(run)
    call_id, call = _failed_call(run, step_id)
    message = str(error.get("message") or f"the run ended {run.status}")
    if declined:
        message = f"the user declined the input asked at '{declined}'; the run was cancelled"
    detail = call.detail if call else {}
    command = detail.get("tool") or error.get("tool")
    body = detail.get("body")
    payload = response_payload(body) if body is not None else None
    ended = WorkflowCancelled if run.status == "cancelled" else WorkflowFailed
    return error_result(
        ended(
            message,
            context={
                "workflow_id": run.workflow_id,
                "run_id": run.run_id,
                "step_id": step_id,
                "node_id": call_id or step_id,
                "status_code": detail.get("status_code") or error.get("status_code"),
                "api_message": detail.get("api_message") or error.get("api_message"),
            },
            suggestion="Read the failing step's error and response_payload; fix the inputs and "
            "call the workflow again."
            if run.status == "failed"
            else "Call the workflow again if the user still wants it.",
            run_id=run.run_id,
            step_id=step_id,
            node_id=call_id or step_id,
            command=command,
            response_payload=payload,
            status=run.status,
        )
    )


def response_payload(body: Any) -> Any:
    """An API response body as an error may show it: secrets redacted, at most ~8 KB."""
    scrubbed = redactor.scrub_any(body)
    text = json.dumps(scrubbed, ensure_ascii=False, default=str)
    if len(text) <= MAX_RESPONSE_PAYLOAD:
        return scrubbed
    return {"truncated": True, "size": len(text), "text": text[:MAX_RESPONSE_PAYLOAD]}


def _failed_call(run: RunRecord, step_id: str | None) -> tuple[str | None, NodeState | None]:
    """The failed call under ``step_id`` (itself, or the deepest failed call inside it)."""
    if step_id is None:
        return None, None
    node = run.nodes.get(step_id)
    if node is not None and node.detail.get("tool"):
        return step_id, node
    inner = [
        (node_id, state)
        for node_id, state in run.nodes.items()
        if node_id.startswith(step_id + "/")
        and state.status == "failed"
        and state.detail.get("tool")
    ]
    if inner:
        return max(inner, key=lambda item: len(item[0]))
    return step_id, node


def _failed_node(run: RunRecord) -> str | None:
    for node_id, node in run.nodes.items():
        if node.status == "failed":
            return node_id
    return None
