"""The five markdown workflow tools as data, and one function that runs a call of any of them.

``TOOL_SPECS`` holds, per tool, what an MCP ``Tool`` needs: ``name``, ``title``,
``description`` (model-facing), ``inputSchema``, ``outputSchema`` and ``annotations`` (MCP
hint names). The adapter converts them to protocol types; nothing here imports MCP.

:func:`call_tool` validates the arguments against the tool's ``inputSchema`` (an
``invalid_request`` error naming the field otherwise), picks the session (:func:`session_key`)
and calls the service; its answer is the call's ``structuredContent``.
"""

from __future__ import annotations

import copy
from typing import Any

from jsonschema import Draft202012Validator

from dynamic_tools.markdown import errors
from dynamic_tools.markdown.prompts import REPORT_ARGUMENTS_SCHEMA
from dynamic_tools.markdown.service import MarkdownWorkflowService, session_key

SESSION_ID_PROPERTY: dict[str, Any] = {
    "type": "string",
    "description": "Optional. The workflow session to use; by default the MCP session. Pass "
    "the session_id the earlier answers gave you to continue a workflow after reconnecting, "
    "or when your client has no MCP session.",
}


def _input(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {**properties, "session_id": SESSION_ID_PROPERTY},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _output(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "session_id": {"type": "string"},
            "next_action": {"type": "string", "description": "What to do next."},
            **properties,
        },
        "required": ["session_id", "next_action", *required],
        "additionalProperties": True,
    }


_STEP_NUMBER = {"type": "integer", "minimum": 0}
_OBJECT = {"type": "object"}
_NULLABLE_OBJECT = {"type": ["object", "null"]}

_REPORT_INPUT = copy.deepcopy(REPORT_ARGUMENTS_SCHEMA)
_REPORT_INPUT["properties"]["session_id"] = SESSION_ID_PROPERTY

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "name": "load_workflow",
        "title": "Load a markdown workflow",
        "description": (
            "Load and parse a markdown workflow: steps written as '### 🔧 WORKFLOW STEP: <name>' "
            "with a description, the tool(s) to use, inputs, outputs and assertions. Give "
            "'path' (a .md file in the server's registry directory, e.g. "
            "'markdown/book_flight.md') or 'content' (the markdown itself), and 'variables' "
            "for the values the workflow needs from you (its [PLACEHOLDERS], e.g. "
            '{"ORIGIN": "AMS"}). Returns the steps and the first step to run; then call '
            "execute_workflow_step. Loading replaces the workflow loaded in this session."
        ),
        "inputSchema": _input(
            {
                "path": {
                    "type": "string",
                    "description": "A .md file, relative to the registry directory.",
                },
                "content": {"type": "string", "description": "The workflow's markdown text."},
                "variables": {
                    "type": "object",
                    "description": "Initial variables: UPPER_SNAKE_CASE names to values.",
                    "additionalProperties": True,
                },
            }
        ),
        "outputSchema": _output(
            ["status", "workflow", "variables", "current_step"],
            {
                "status": {"const": "loaded"},
                "workflow": _OBJECT,
                "variables": _OBJECT,
                "current_step": _STEP_NUMBER,
            },
        ),
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    },
    {
        "name": "execute_workflow_step",
        "title": "Get the prompt of the current workflow step",
        "description": (
            "Build the enriched prompt of the current step of the loaded workflow: what to do "
            "(variables resolved), which tool(s) to call, the success criteria to evaluate, "
            "the values to extract, and how to call report_step_result. Carry out the prompt, "
            "then report. Calling it again repeats the prompt; after a failed step it retries "
            "that step. 'step_number' is optional and must be the current step."
        ),
        "inputSchema": _input({"step_number": _STEP_NUMBER}),
        "outputSchema": _output(
            ["status"],
            {
                "status": {"enum": ["in_progress", "completed"]},
                "step_number": _STEP_NUMBER,
                "prompt": {"type": "string"},
            },
        ),
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    },
    {
        "name": "report_step_result",
        "title": "Report the result of a workflow step",
        "description": (
            "Report the outcome of the step you just executed: status 'passed' or 'failed', "
            "one result per assertion ({assertion, passed, detail}), and the output variables "
            "you extracted. The server records it, merges the variables and answers with the "
            "next step's prompt, or the completion. A failed step stops the workflow (later "
            "steps are skipped); you may retry it with execute_workflow_step."
        ),
        "inputSchema": _REPORT_INPUT,
        "outputSchema": _output(
            ["recorded", "workflow_status", "variables"],
            {
                "recorded": _OBJECT,
                "workflow_status": {"enum": ["running", "completed", "failed"]},
                "variables": _OBJECT,
                "next_step": _NULLABLE_OBJECT,
                "warnings": {"type": "array", "items": {"type": "string"}},
            },
        ),
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    },
    {
        "name": "get_workflow_state",
        "title": "Get the workflow's progress",
        "description": (
            "Return the progress of the loaded workflow: each step's status (passed, failed, "
            "skipped, in_progress, not_started), its assertion results, output variables and "
            "error message, the current step and all variables."
        ),
        "inputSchema": _input({}),
        "outputSchema": _output(
            ["workflow_status", "steps", "variables"],
            {
                "workflow_status": {"enum": ["ready", "running", "completed", "failed"]},
                "steps": {"type": "array"},
                "variables": _OBJECT,
            },
        ),
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "reset_workflow",
        "title": "Restart the workflow",
        "description": (
            "Reset the loaded workflow to its first step, with the variables given at load; "
            "every step's result is cleared. The workflow stays loaded."
        ),
        "inputSchema": _input({}),
        "outputSchema": _output(
            ["status", "current_step"],
            {"status": {"const": "reset"}, "current_step": _STEP_NUMBER},
        ),
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    },
]

TOOL_NAMES: frozenset[str] = frozenset(spec["name"] for spec in TOOL_SPECS)
_VALIDATORS = {spec["name"]: Draft202012Validator(spec["inputSchema"]) for spec in TOOL_SPECS}


async def call_tool(
    service: MarkdownWorkflowService,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    transport_session_id: str | None,
    callable_tools: set[str],
) -> dict[str, Any]:
    """Run a call of tool ``name``; ``callable_tools`` are the tools this session can call."""
    if name not in _VALIDATORS:
        raise errors.invalid_request(
            f"'{name}' is not a markdown workflow tool",
            f"Use one of {', '.join(sorted(TOOL_NAMES))}.",
        )
    args = dict(arguments or {})
    problems = sorted(_VALIDATORS[name].iter_errors(args), key=lambda e: list(e.path))
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.path) or "(arguments)"
        raise errors.invalid_request(
            f"{name}: {where}: {first.message}",
            f"Call {name} with arguments matching its input schema.",
        )
    sid = session_key(transport_session_id, args.pop("session_id", None))
    if name == "load_workflow":
        return await service.load(
            sid,
            path=args.get("path"),
            content=args.get("content"),
            variables=args.get("variables"),
            callable_tools=callable_tools,
        )
    if name == "execute_workflow_step":
        return await service.execute_step(
            sid, args.get("step_number"), callable_tools=callable_tools
        )
    if name == "report_step_result":
        return await service.report(
            sid,
            args["step_number"],
            args["status"],
            args.get("assertion_results"),
            args.get("output_variables"),
            args.get("error_message", ""),
        )
    if name == "get_workflow_state":
        return await service.state(sid)
    return await service.reset(sid)
