"""The engine's ToolRunner over real HTTP: registered tools and the built-in ``rest_call``.

Every call goes through the :class:`~dynamic_tools.http.invoker.ToolInvoker`, as every other
caller of a tool: the arguments checked against the tool's input schema (a validator compiled
once per tool), the request built in code from the registry, the target through the SSRF
guard. Every request carries the ``Idempotency-Key`` the engine gives
(run id + node id [+ item index]), the same for every retry of the same operation; it travels
apart from a session's headers, which may not set it (``http/outbound_headers.py``).

``rest_call`` args: ``method``, ``path`` (appended to the document's ``base_url``), optional
``query`` (object), ``body`` and ``headers`` (object of strings). It is held to the same rules
as a tool: dot segments refused, header values visible ASCII, no credential-like headers or
query names (a rest_call has no secrets: call a registered tool with ``auth``), a base URL HTTP
can use, the final URL under the base URL, and no header that changes where or how the request
travels or who it claims to come from (``Host``, ``X-Forwarded-For``...).

A run of a model-composed workflow (its scope says ``composed``) holds every call, ``rest_call``
included, to the safe-by-default rule (``tools/safety.py``) before anything is sent: a call that
changes things and that the session's ``X-Allow-Unsafe-Paths`` does not match fails ``refused``,
naming the header and the patterns that would allow it.

Whatever goes wrong is a :class:`ToolCallFailed`: ``transport``/``timeout`` (retryable by
``retry_on``), ``refused`` (the call cannot be made as asked) or ``error`` (HTTP cannot carry
the request, or an unexpected failure) — never another exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import ValidationError

from dynamic_tools.engine.ports import ToolCallFailed, ToolResult
from dynamic_tools.errors import (
    ConfigurationError,
    DynamicToolsError,
    InvalidInputError,
    NotFoundError,
    TargetRefusedError,
    TransportError,
    UnsafeCallRefusedError,
)
from dynamic_tools.execution.run_context import current_run
from dynamic_tools.http.invoker import ToolInvoker
from dynamic_tools.http.outbound_headers import refused_reason
from dynamic_tools.tools.credentials import looks_like_credential
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.registry import ToolRegistry
from dynamic_tools.tools.safety import RestCall, check_call, check_tool_call
from dynamic_tools.tools.scope import ToolScope
from dynamic_tools.tools.static_credentials import RUN_VALUES
from dynamic_tools.tools.text_values import read_text_values

ScopeLookup = Callable[[str], Awaitable[ToolScope | None]]
"""The tool scope of a run by its id (``RunScopeStore.get``)."""
SessionQuery = Callable[[ToolScope, Mapping[str, Any], float | None], Awaitable[ToolResult]]
"""``{prefix}_query`` of a session run: the question answered over the session's API."""

BUILTINS = frozenset({"rest_call", "sql_query"})
_REST_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_SEGMENT = "path_segment_"


class HttpToolRunner:
    """Calls registry tools (and ``rest_call``) for workflow runs, and a session run's own tools.

    A run started by an MCP session (``tools/scope.py``) also calls the session's operations
    and its core tools: ``{prefix}_execute`` calls the operation it names, ``{prefix}_query``
    asks ``query`` (the single-shot pipeline over the session's API). The session's headers go
    with the calls of its own API only: never with a registry tool, whichever way it is
    reached (by name, or through the core tools of a session whose API is the registry).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        invoker: ToolInvoker,
        *,
        scopes: ScopeLookup | None = None,
        query: SessionQuery | None = None,
    ) -> None:
        self.registry = registry
        self.invoker = invoker
        self.scopes = scopes
        self.query = query

    def knows(self, tool: str) -> bool:
        """A registered tool or a built-in (a session's own tools are known to its runs)."""
        return tool in BUILTINS or tool in self.registry

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        """Validate, build, send; raise :class:`ToolCallFailed` when nothing was answered."""
        scope = await self._scope()
        if scope is not None and tool == scope.core_tools[0]:
            if self.query is None:
                raise ToolCallFailed(f"'{tool}' needs the LLM pipeline", kind="refused")
            return await self.query(scope, args, timeout_s)
        try:
            config, arguments, session_api = self._resolve(tool, args, scope)
        except ToolCallFailed:
            raise
        except NotFoundError:
            raise ToolCallFailed(f"tool '{tool}' is not registered", kind="refused") from None
        except DynamicToolsError as exc:
            raise ToolCallFailed(exc.message, kind="refused") from None
        except ValidationError as exc:  # a rest_call whose base URL or headers are refused
            raise ToolCallFailed(_rest_call_problem(exc), kind="refused") from None
        except Exception as exc:  # a bug or an unforeseen input: still a structured failure
            raise _unexpected(tool, exc) from None
        # A null argument is not sent (an optional workflow param not given is null); text
        # for a parameter that travels as text is read as its type (tools/text_values.py).
        arguments = read_text_values(config, {k: v for k, v in arguments.items() if v is not None})
        if scope is not None and scope.composed:  # a model-authored draft: safe by default
            try:
                _check_composed(tool, args, config, arguments, scope.allow_unsafe)
            except UnsafeCallRefusedError as refused:
                raise ToolCallFailed(refused.message, kind="refused") from None
        headers = dict(scope.headers) if session_api and scope is not None else None
        try:
            result = await self.invoker.invoke(
                config,
                arguments,
                extra_headers=headers,
                idempotency_key=idempotency_key,
                timeout_s=timeout_s,
            )
        except TransportError as exc:
            raise ToolCallFailed(
                exc.message, kind="timeout" if exc.timed_out else "transport"
            ) from None
        except (InvalidInputError, ConfigurationError, TargetRefusedError) as exc:
            raise ToolCallFailed(exc.message, kind="refused") from None
        except DynamicToolsError as exc:  # not sendable, or an unexpected outbound failure
            raise ToolCallFailed(exc.message, kind="error") from None
        except Exception as exc:
            raise _unexpected(tool, exc) from None
        if result.graphql_errors:  # answered, but the operation failed: never retried
            raise ToolCallFailed(f"{tool} answered {result.failure_message()}", kind="refused")
        return result  # the sender's HttpResult is a ToolResult: no copy, no other shape

    async def _scope(self) -> ToolScope | None:
        run_id = current_run.get()
        if run_id is None or self.scopes is None:
            return None
        try:
            return await self.scopes(run_id)
        except DynamicToolsError as exc:  # sealed under another key: no call without them
            raise ToolCallFailed(exc.message, kind="refused") from None

    def _resolve(
        self, tool: str, args: Mapping[str, Any], scope: ToolScope | None
    ) -> tuple[ToolConfig, dict[str, Any], bool]:
        """The tool, its arguments, and whether it is an operation of the session's API."""
        if tool == "rest_call":
            return rest_call_tool(args), rest_call_arguments(args), False
        if scope is None:
            return self.registry.get(tool), dict(args), False
        if tool in scope.tools:  # an operation, or a GraphQL API's {prefix}_execute
            return scope.tools[tool], dict(args), True
        if tool == scope.core_tools[1]:
            return self._operation(scope, args)
        return self.registry.get(tool), dict(args), False  # the server's tool, its credentials

    def _operation(
        self, scope: ToolScope, args: Mapping[str, Any]
    ) -> tuple[ToolConfig, dict[str, Any], bool]:
        """``{prefix}_execute``: the operation it names, with the arguments it gives."""
        name = args.get("operation")
        arguments = args.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise ToolCallFailed(
                f"{scope.core_tools[1]}: arguments must be an object", kind="refused"
            )
        own = scope.operations
        api = own or self.registry.by_name()
        if not isinstance(name, str) or name not in api:
            raise ToolCallFailed(
                f"{scope.core_tools[1]}: '{name}' is not an operation of this API",
                kind="refused",
            )
        return api[name], dict(arguments), bool(own)  # over the registry: a registry tool


def _check_composed(
    tool: str,
    args: Mapping[str, Any],
    config: ToolConfig,
    arguments: Mapping[str, Any],
    allow: tuple[str, ...],
) -> None:
    """The safe-by-default rule for a call of a model-composed run (``tools/safety.py``).

    A ``rest_call`` is judged by its method and the path it gives; any other tool by its
    operation (or the GraphQL document it is given).
    """
    if tool == "rest_call":
        method = str(args.get("method", "GET")).upper()
        check_call(RestCall(method, str(args.get("path"))), allow)
    else:
        check_tool_call(config, arguments, allow)


def _unexpected(tool: str, exc: Exception) -> ToolCallFailed:
    """A failure nobody mapped: only its type is named (its text may hold anything)."""
    return ToolCallFailed(
        f"calling '{tool}' failed on an unexpected {type(exc).__name__}", kind="error"
    )


def rest_call_tool(args: Mapping[str, Any]) -> ToolConfig:
    """A one-off tool for a ``rest_call``: the path's segments become path parameters."""
    base_url = args.get("base_url")
    if not base_url:
        raise ToolCallFailed("rest_call needs the document's base_url", kind="refused")
    method = str(args.get("method", "GET")).upper()
    if method not in _REST_METHODS:
        raise ToolCallFailed(
            f"rest_call method '{method}' is not one of {_REST_METHODS}", kind="refused"
        )
    segments = _segments(args.get("path"))
    parameters: dict[str, Any] = {
        f"{_SEGMENT}{i}": {"type": "string", "in": "path", "required": True}
        for i in range(len(segments))
    }
    for key in _query(args):
        if key.startswith(_SEGMENT):
            raise ToolCallFailed(f"rest_call query name '{key}' is reserved", kind="refused")
        if looks_like_credential(key):
            raise ToolCallFailed(
                f"rest_call query name '{key}' looks like a credential; a rest_call carries no "
                "secrets: call a registered tool whose auth names a secret",
                kind="refused",
            )
        parameters[key] = {"in": "query"}
    for name in _object(args, "headers"):
        reason = refused_reason(str(name))
        if reason is not None:
            raise ToolCallFailed(
                f"rest_call header '{name}' may not be set: {reason}", kind="refused"
            )
    body = args.get("body")
    if body is not None and not isinstance(body, dict):
        raise ToolCallFailed("rest_call body must be an object", kind="refused")
    # The static params hold this run's values (references rendered), not literals stored in
    # a tool: the document's literals were checked when it was validated.
    return ToolConfig.model_validate(
        {
            "name": "rest_call",
            "description": "A REST call against the document's base URL",
            "api": {
                "method": method,
                "base_url": base_url,
                "path": "/" + "/".join(f"{{{_SEGMENT}{i}}}" for i in range(len(segments))),
            },
            "parameters": parameters,
            "static_params": {
                "header": {str(k): str(v) for k, v in _object(args, "headers").items()},
                "body": body or {},
            },
        },
        context={RUN_VALUES: True},
    )


def _rest_call_problem(exc: ValidationError) -> str:
    """What is wrong with a rest_call, in the words of the workflow (``base_url``, headers)."""
    where = {
        "api.base_url": "base_url",
        "static_params.header": "headers",
        "static_params.body": "body",
    }
    problems = []
    for error in exc.errors(include_url=False)[:3]:
        loc = ".".join(str(part) for part in error["loc"][:2])
        rest = "".join(f".{part}" for part in error["loc"][2:])
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{where.get(loc, loc)}{rest}: {message}")
    return "rest_call cannot be made: " + "; ".join(problems)


def rest_call_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of the one-off tool: path segments, then query values."""
    segments = _segments(args.get("path"))
    arguments: dict[str, Any] = {f"{_SEGMENT}{i}": seg for i, seg in enumerate(segments)}
    arguments.update(_query(args))
    return arguments


def _query(args: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in _object(args, "query").items()}


def _object(args: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = args.get(name) or {}
    if not isinstance(value, dict):
        raise ToolCallFailed(f"rest_call {name} must be an object", kind="refused")
    return value


def _segments(path: Any) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise ToolCallFailed("rest_call needs a path starting with '/'", kind="refused")
    return [segment for segment in path.split("/")[1:] if segment != ""]
