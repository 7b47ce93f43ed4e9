"""Layer 1: each API operation as an MCP tool, plus ``{prefix}_query`` and ``{prefix}_execute``.

An operation's ``inputSchema`` is its parameters' schema; its ``outputSchema`` is the declared
output schema (wrapped as ``{"result": ...}`` when it is not an object, since 2025-11-25 needs
an object at the root); its annotations come from the HTTP method. A call is validated against
the schema, built from the tool config (never from the model's text), sent through the SSRF
guard with the session's ``X-Target-Headers`` when the API is the session's own (a registry
tool never gets them), and answered as structured content.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator

from dynamic_tools.errors import DynamicToolsError, UnsafeCallRefusedError
from dynamic_tools.http.invoker import ArgumentsRejected, ToolInvoker
from dynamic_tools.mcp.errors import ApiErrorAnswer, OutputSchemaMismatch, error_result
from dynamic_tools.mcp.results import data_result
from dynamic_tools.redaction import redactor
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.safety import check_tool_call

WRAPPED = "result"
RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


def output_schema_of(config: ToolConfig) -> tuple[dict[str, Any] | None, bool]:
    """The MCP output schema of a tool and whether results are wrapped in ``{"result": …}``."""
    schema = config.output_schema
    if schema is None:
        return None, False
    if schema.get("type") == "object":
        return schema, False
    return {"type": "object", "properties": {WRAPPED: schema}, "required": [WRAPPED]}, True


def annotations_of(config: ToolConfig, title: str | None = None) -> types.ToolAnnotations:
    """MCP annotations from the tool's (method-derived) annotations.

    One object per distinct set of hints, shared by the tools that have it (a catalogue of
    1,000 tools has a handful): never change it.
    """
    a = config.effective_annotations
    return _annotations(title, a.read_only, a.destructive, a.idempotent, a.open_world)


@functools.lru_cache(maxsize=256)
def _annotations(
    title: str | None,
    read_only: bool | None,
    destructive: bool | None,
    idempotent: bool | None,
    open_world: bool | None,
) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


def api_tool(config: ToolConfig, *, description: str) -> types.Tool:
    """The MCP tool of one API operation."""
    output_schema, _ = output_schema_of(config)
    return types.Tool(
        name=config.name,
        description=description,
        input_schema=config.input_schema(),
        output_schema=output_schema,
        annotations=annotations_of(config),
    )


QUERY_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "minLength": 1, "description": "What you need."},
        "format_response": {
            "type": "boolean",
            "default": False,
            "description": "Also return a short answer written from the response.",
        },
        "sql": {
            "type": "string",
            "minLength": 1,
            "description": "Optional: one read-only SELECT over the table 'result' "
            "(the last response's rows; each call's rows are also 'step_0', 'step_1', ...) "
            "to filter, rank, join or aggregate what the API cannot; the answer's 'sql' "
            "gives its rows.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}
"""The input of ``{prefix}_query`` (MCP, and a workflow's call of it)."""


def query_tool(
    prefix: str, label: str, names: Sequence[str], *, graphql: bool = False, read_only: bool = True
) -> types.Tool:
    """``{prefix}_query``: a question in natural language → the bounded query agent.

    Safe by default: the model may choose only operations that change nothing (a REST GET, a
    GraphQL query) unless the session's ``X-Allow-Unsafe-Paths`` allows more.
    """
    how = (
        "the server's LLM writes GraphQL queries for this API's schema (each parsed and "
        "validated before it is sent)"
        if graphql
        else f"the server's LLM calls this API's {len(names)} operations (arguments validated, "
        "requests built in code)"
    )
    safety = (
        " Read-only: operations that change things are refused unless the session allows them "
        "(X-Allow-Unsafe-Paths)."
        if read_only
        else ""
    )
    return types.Tool(
        name=f"{prefix}_query",
        description=(
            f"[{label}] Ask for something in natural language; {how}, one call at a time, each "
            "reading the previous answers (a list, then details), within a step budget, then "
            "answers. The result lists the calls made ('steps') and the last response. Use it "
            f"for single-API questions when no w_* workflow or r_* recipe fits.{safety}"
        ),
        input_schema=QUERY_INPUT_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=read_only, destructive_hint=not read_only, open_world_hint=True
        ),
    )


def execute_tool(prefix: str, label: str, names: Sequence[str]) -> types.Tool:
    """``{prefix}_execute``: a direct call of a named operation, validated against its schema.

    Safe by default (``tools/safety.py``): an operation that changes things is refused unless
    the session's ``X-Allow-Unsafe-Paths`` matches it.
    """
    return types.Tool(
        name=f"{prefix}_execute",
        description=(
            f"[{label}] Call one operation of this API directly: give its name and its "
            "arguments; they are validated against the operation's input schema before any "
            "request is sent. Read-only unless the session allows more: an operation other than "
            "GET/HEAD/OPTIONS is refused unless X-Allow-Unsafe-Paths matches its path or name. "
            "Operations: " + ", ".join(names[:50]) + (" …" if len(names) > 50 else "")
        ),
        input_schema=execute_input_schema(names),
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=True, open_world_hint=True
        ),
    )


def execute_input_schema(names: Sequence[str]) -> dict[str, Any]:
    """The input of a REST API's ``{prefix}_execute``: an operation and its arguments."""
    return {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": list(names)},
            "arguments": {"type": "object", "default": {}},
        },
        "required": ["operation"],
        "additionalProperties": False,
    }


class ApiCaller:
    """Calls one API operation through the invoker; answers an MCP result."""

    def __init__(self, invoker: ToolInvoker) -> None:
        self.invoker = invoker

    async def call(
        self,
        config: ToolConfig,
        arguments: dict[str, Any],
        *,
        extra_headers: dict[str, str] | None = None,
        composed: Sequence[str] | None = None,
    ) -> types.CallToolResult:
        """Call ``config`` with ``arguments``; failures are ``isError`` error-payload results.

        ``composed``: the call was composed by a model (``{prefix}_execute``, a recipe), and
        these are the session's ``X-Allow-Unsafe-Paths``: the safe-by-default rule
        (``tools/safety.py``) is checked before anything is sent.
        """
        try:
            self.invoker.check(config, arguments)
            if composed is not None:
                check_tool_call(config, arguments, composed)
        except ArgumentsRejected as rejected:
            return error_result(rejected)
        except UnsafeCallRefusedError as refused:
            return error_result(refused, command=config.name)
        try:
            result = await self.invoker.invoke(config, arguments, extra_headers=extra_headers)
        except DynamicToolsError as exc:
            return error_result(exc, command=config.name)
        body = result.body
        if result.failed:
            context: dict[str, Any] = {
                "tool": config.name,
                "status_code": result.status_code,
                "api_message": result.api_message(),
            }
            if result.graphql_errors:
                context["errors"] = result.graphql_errors
            return error_result(
                ApiErrorAnswer(
                    f"{config.name} answered {result.failure_message()}",
                    context=context,
                    retryable=result.status_code in RETRYABLE_STATUS,
                    suggestion=_suggestion_for(result.status_code),
                    command=config.name,
                    response_payload=redactor.scrub_any(body),
                )
            )
        return success_result(config, body)


def success_result(config: ToolConfig, body: Any) -> types.CallToolResult:
    """A tool result for a 2xx answer: structured content conforming to the output schema."""
    schema, wrapped = output_schema_of(config)
    structured = {WRAPPED: body} if wrapped or not isinstance(body, dict) else body
    if schema is not None:
        problems = list(_output_validator(config, schema).iter_errors(structured))
        if problems:
            return error_result(
                OutputSchemaMismatch(
                    f"{config.name} answered, but not in its declared output schema: "
                    + problems[0].message[:300],
                    context={"tool": config.name},
                    suggestion="Fix the tool's output_schema or the API; the raw answer is in "
                    "response_payload.",
                    command=config.name,
                    response_payload=redactor.scrub_any(body),
                )
            )
    text = json.dumps(body, ensure_ascii=False, default=str) if body is not None else "(empty)"
    return data_result(structured, text)


_OUTPUT_VALIDATORS: dict[int, tuple[ToolConfig, Draft202012Validator]] = {}


def _output_validator(config: ToolConfig, schema: dict[str, Any]) -> Draft202012Validator:
    """The output validator of ``config``, compiled once per config object.

    Configs are frozen and replaced on reload, so identity is the key (checked with ``is``).
    """
    cached = _OUTPUT_VALIDATORS.get(id(config))
    if cached is not None and cached[0] is config:
        return cached[1]
    if len(_OUTPUT_VALIDATORS) >= 4096:
        _OUTPUT_VALIDATORS.clear()
    validator = Draft202012Validator(schema)
    _OUTPUT_VALIDATORS[id(config)] = (config, validator)
    return validator


def _suggestion_for(status: int) -> str:
    if status in (401, 403):
        return "The API refused the credentials; check the session's X-Target-Headers or secrets."
    if status == 404:
        return "The resource does not exist; search for a valid id first."
    if status in (400, 409, 422):
        return "Change the arguments as the response_payload explains and call again."
    if status in RETRYABLE_STATUS:
        return "Retry after a short wait."
    return "Read response_payload and change the call."
