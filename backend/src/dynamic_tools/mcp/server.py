"""The MCP server: the SDK's low-level ``Server`` wired to the session views.

One endpoint serves both protocol revisions (the SDK routes on ``MCP-Protocol-Version``):
2025-11-25 with sessions (``initialize``, elicitation, progress) and 2026-07-28 stateless.
``session_app`` serves it over streamable HTTP at ``/mcp`` (loaded on the first request, see
:mod:`dynamic_tools.api.mcp_mount`; streams are resumable, see
:mod:`dynamic_tools.mcp.event_store`); ``serve_stdio`` runs the same server on stdin/stdout for
desktop clients.

Besides tools, resources, prompts and tasks: ``completion/complete``
(:mod:`~dynamic_tools.mcp.completion`), ``logging/setLevel``
(:mod:`~dynamic_tools.mcp.client_log`) and ``resources/subscribe`` / ``unsubscribe``
(:mod:`~dynamic_tools.mcp.resource_updates`). Every request runs with its correlation id
bound (the HTTP request's ``X-Request-ID``, a fresh id on stdio): error payloads carry it and
log lines show it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from loguru import logger
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from dynamic_tools import __version__
from dynamic_tools.access.authenticate import require
from dynamic_tools.access.policy import (
    MCP_PROMPT_SCOPE,
    MCP_RESOURCE_SCOPE,
    audited,
    mcp_tool_scope,
)
from dynamic_tools.access.principals import Principal
from dynamic_tools.errors import DynamicToolsError, ForbiddenError, InvalidInputError
from dynamic_tools.logs import bind_correlation_id, correlation_id
from dynamic_tools.markdown.errors import invalid_arguments
from dynamic_tools.mcp.arguments import check_arguments
from dynamic_tools.mcp.channel import channel_for
from dynamic_tools.mcp.client_log import ClientLog
from dynamic_tools.mcp.completion import complete
from dynamic_tools.mcp.confirmation import ConfirmationTokens, gate
from dynamic_tools.mcp.entries import Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.errors import (
    INVALID_PARAMS,
    bad_request,
    bind_call,
    error_result,
    for_tool,
    invalid_params,
    protocol_params_error,
    resource_not_found,
    unexpected_result,
    unknown_tool,
)
from dynamic_tools.mcp.event_store import ResumableSessionManager
from dynamic_tools.mcp.http_context import request_headers, request_state, session_key
from dynamic_tools.mcp.principal import bind_principal, principal_of
from dynamic_tools.mcp.request_spans import RequestSpans
from dynamic_tools.mcp.resource_updates import ResourceUpdates
from dynamic_tools.mcp.resources import ResourceSet
from dynamic_tools.mcp.session_config import parse_session_headers
from dynamic_tools.mcp.surface import McpSurface
from dynamic_tools.mcp.tasks import TaskRuntime
from dynamic_tools.observability.tracing import Tracing
from dynamic_tools.persistence import run_scopes
from dynamic_tools.settings import Settings

# Lists longer than this are paged: one 1,000-tool answer is ~1.5 MB, over the 1 MiB event
# size the SDK client accepts by default. Shorter lists come whole (no cursor to follow).
TOOLS_PAGE = 400
MAX_REPORTED = 10_000  # (session, problems) pairs told of what their headers left out

INSTRUCTIONS = """\
Dynamic Tools turns HTTP APIs into tools you can use safely. Choose in this order:
1. A w_* tool when the request matches a workflow: the server runs every step for you
   (ordering, branching, retries, rollback). Read workflow://{domain}/overview for the guide.
2. An r_* recipe when one fits: a learned, parameterised call that needs no reasoning.
3. {prefix}_plan(goal) to get a suggested workflow or tool order with reasons.
4. The API operations directly (their descriptions list Requires/Next hints), or
   {prefix}_query(question) for a single-API question in natural language.
Errors come back as structured results (error_code, message, violations, suggested_action).
"""


class McpEndpoint:
    """The SDK server plus what it serves: the surface (tools) and the resources."""

    def __init__(self, surface: McpSurface, resources: ResourceSet | None = None) -> None:
        self.surface = surface
        self.resources = resources or ResourceSet()
        self.client_log = ClientLog()
        self._reported: OrderedDict[tuple[str | None, int], None] = OrderedDict()
        self._tokens: ConfirmationTokens | None = None
        self.updates = ResourceUpdates(self.resources.read, self._view_of, self._generation)
        self.server: Server[Any] = _TaskAwareServer(
            "dynamic-tools",
            version=__version__,
            title="Dynamic Tools",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_completion=self._complete,
            get_tool_input_schema=self.header_schema,
        )
        # The SDK's tracing middleware uses the global provider: ours uses the services' one.
        self.server.middleware = [RequestSpans(self.tracing)]
        # Registered here, not in the constructor: the SDK warns that logging is deprecated
        # in 2026-07-28; 2025-11-25 sessions use it (the capability is announced to them only).
        self.server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self._set_level
        )
        self.tasks = TaskRuntime(self)
        self.tasks.install()
        self.server.middleware.insert(0, _correlate)  # outermost: task creation runs inside
        surface.tasks = _TaskJobs(self.tasks)

    async def _view_of(self, config: Any) -> SessionView:
        return await self.surface.view(config)

    def _generation(self) -> tuple[int, ...]:
        """Changes when workflows, tools or recipes change (resource subscriptions)."""
        services = self.surface.services
        recipes = self.surface.recipes.generation if self.surface.recipes else 0
        return (services.workflows.generation, services.registry.generation, recipes)

    async def aclose(self) -> None:
        """Stop background work (the resource-update watcher)."""
        await self.updates.aclose()

    def tracing(self) -> Tracing:
        """The services' tracing (off until they are attached)."""
        try:
            return self.surface.services.tracing
        except RuntimeError:
            return Tracing.off()

    def initialization_options(self) -> Any:
        """Initialisation options announcing list-changed notifications."""
        return self.server.create_initialization_options(
            NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
        )

    async def view_for(self, ctx: Any) -> SessionView:
        """The session view of the request's headers (the registry without headers)."""
        headers = request_headers(ctx)
        try:
            config = parse_session_headers(headers).for_principal(principal_of(ctx).id)
            return await self.surface.view(config)
        except DynamicToolsError as exc:
            raise invalid_params(exc) from None

    async def _report_problems(self, ctx: Any, view: SessionView) -> None:
        """Tell the session once what of its headers was left out (again only when it changes)."""
        left_out = [f"{p['header']}: {p.get('workflow') or p.get('tool')}" for p in view.problems]
        key = (session_key(ctx), hash("\n".join(left_out)))
        if key in self._reported:
            return
        data = {
            "event": "session_documents",
            "message": f"{len(left_out)} item(s) of this session's headers are left out (the "
            "rest is served); read dynamic-tools://session/problems for the violations",
            "left_out": left_out,
        }
        if await self.client_log.send(ctx, "warning", data):  # sent: not again for this view
            self._reported[key] = None
            while len(self._reported) > MAX_REPORTED:
                self._reported.popitem(last=False)

    def header_schema(self, name: str) -> dict[str, Any] | None:
        """The schema ``Mcp-Param-*`` headers of a 2026-07-28 ``tools/call`` are checked against.

        Without this lookup the SDK runs and serialises the whole ``tools/list`` before every
        call (about 50 ms at 1,000 tools). Only ``x-mcp-header`` annotations matter, so the
        answer is the first annotated schema of ``name`` in the views built so far or in the
        registry, and None (nothing to check) when no such schema is known.
        """
        views = self.surface.cached_views()
        schemas = [v.entries[name].tool.input_schema for v in views if name in v.entries]
        registry = self.surface.services.registry
        if name in registry:
            schemas.append(registry.get(name).input_schema())
        return next((s for s in schemas if _mentions_header(s)), None)

    # --- tools -----------------------------------------------------------------------------
    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        view = await self.view_for(ctx)
        if view.problems:
            await self._report_problems(ctx, view)
        listed = _callable(view, principal_of(ctx))
        cursor = params.cursor if params is not None else None
        if cursor is None and len(listed) <= TOOLS_PAGE:
            return types.ListToolsResult(tools=listed)
        if cursor is not None and not cursor.isdigit():
            raise bad_request(
                f"cursor '{cursor[:40]}' is not one this server gave", "cursor", "cursor"
            )
        start = int(cursor or 0)
        end = start + TOOLS_PAGE
        following = str(end) if end < len(listed) else None
        return types.ListToolsResult(tools=listed[start:end], next_cursor=following)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> Result:
        view = await self.view_for(ctx)
        entry = view.entry(params.name)
        if entry is None:
            raise unknown_tool(params.name)
        bind_call(entry.tool.name, params.arguments)
        principal = principal_of(ctx)
        needed = mcp_tool_scope(entry.tool.name, prefix=view.prefix)
        try:  # the HTTP gate answered 403 already; this holds for every transport
            require(principal, needed, f"call {entry.tool.name}")
            arguments = check_arguments(entry.tool, params.arguments, more=entry.check)
        except (InvalidInputError, ForbiddenError) as exc:  # nothing runs then
            if entry.layer == "markdown" and isinstance(exc, InvalidInputError):
                exc = invalid_arguments(entry.tool.name, exc)  # its error_type and suggestion
            return await self._answer(ctx, entry, error_result(exc))
        timeout_s = self.surface.services.settings.mcp_client_request_timeout_s
        channel = channel_for(ctx, params, timeout_s=timeout_s)
        call = ToolCall(view=view, arguments=dict(arguments), channel=channel)
        await self.client_log.send(ctx, "debug", {"event": "tool_call", "tool": params.name})
        try:
            stop = None
            if entry.preview is not None:  # destructive: say what goes, confirm, then do it
                stop = await gate(self.tokens(), entry.tool.name, entry.preview, call)
            result = stop if stop is not None else await entry.handler(call)
        except MCPError:
            raise
        except DynamicToolsError as exc:
            result = error_result(exc)
        except Exception as exc:  # a bug: the model gets a correlation id, the log the details
            result = unexpected_result(exc, tool=params.name)
        if audited(entry.tool.name, needed):
            await self._audit(principal, entry.tool.name, call.arguments, result, stop is None)
        return await self._answer(ctx, entry, result)

    async def _audit(
        self,
        principal: Principal,
        tool: str,
        arguments: dict[str, Any],
        result: Result,
        acted: bool,
    ) -> None:
        """Record an authoring or destructive tool call: who, what, on what, how it ended.

        ``acted`` is False for a destructive call answered before it acted (a preview, a
        question, a refusal): its outcome says so.
        """
        named = [f"{k}={arguments[k]}" for k in AUDIT_TARGETS if isinstance(arguments.get(k), str)]
        failed = isinstance(result, types.CallToolResult) and result.is_error
        outcome = "failed" if failed else "ok" if acted else "not_confirmed"
        try:
            await self.surface.services.audit.record(
                principal=principal.id,
                action=tool,
                target=", ".join(named)[:1024] or tool,
                outcome=outcome,
                correlation_id=correlation_id(),
            )
        except Exception as exc:  # the answer stands: a failed audit write is logged, loudly
            logger.error("audit entry not written for {} ({})", tool, type(exc).__name__)

    async def _answer(self, ctx: Any, entry: ToolEntry, result: Result) -> Result:
        """``result`` as the client gets it; the session's log and subscriptions told."""
        name = entry.tool.name
        if isinstance(result, types.CallToolResult) and result.is_error:
            await self.client_log.tool_error(ctx, name, dict(result.structured_content or {}))
        else:
            await self.client_log.send(ctx, "info", {"event": "tool_result", "tool": name})
        annotations = entry.tool.annotations
        if annotations is None or not annotations.read_only_hint:
            self.updates.poke()  # it may have changed a subscribed resource
        answered: Result = for_tool(result, entry.tool)
        return answered

    def tokens(self) -> ConfirmationTokens:
        """The confirmation tokens of destructive tools, under the server's session key."""
        if self._tokens is None:
            settings = self.surface.services.settings
            key = settings.session_key.get_secret_value() if settings.session_key else None
            server_key = run_scopes.session_key(key, settings.data_dir)
            self._tokens = ConfirmationTokens(server_key, settings.mcp_confirmation_ttl_s)
        return self._tokens

    # --- resources -------------------------------------------------------------------------
    async def _list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        view = await self.view_for(ctx)
        return types.ListResourcesResult(resources=self.resources.listing(view))

    async def _list_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        view = await self.view_for(ctx)
        return types.ListResourceTemplatesResult(resource_templates=self.resources.templates(view))

    async def _read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        view = await self.view_for(ctx)
        try:
            require(principal_of(ctx), MCP_RESOURCE_SCOPE, f"read {params.uri}")
        except ForbiddenError as exc:
            raise invalid_params(exc) from None
        try:
            return await self.resources.read(view, str(params.uri))
        except DynamicToolsError as exc:
            modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            raise resource_not_found(exc, str(params.uri), modern=modern) from None

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        view = await self.view_for(ctx)
        try:
            await self.updates.subscribe(ctx, view, str(params.uri))
        except DynamicToolsError as exc:
            raise invalid_params(exc) from None
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: Any, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.updates.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    # --- utilities -------------------------------------------------------------------------
    async def _set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        self.client_log.set_level(ctx, params.level)
        return types.EmptyResult()

    async def _complete(
        self, ctx: Any, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        view = await self.view_for(ctx)
        saved = [w.id for w in self.surface.services.workflows.list()]
        return complete(view, saved, params)

    # --- prompts ---------------------------------------------------------------------------
    async def _list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=self.surface.prompts.listing())

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> Any:
        view = await self.view_for(ctx)
        try:
            require(principal_of(ctx), MCP_PROMPT_SCOPE, f"get the prompt {params.name}")
            # in a thread: workflow.fix_validation parses and validates the given document
            return await asyncio.to_thread(
                self.surface.prompts.get, view, params.name, dict(params.arguments or {})
            )
        except DynamicToolsError as exc:
            raise invalid_params(exc) from None


async def _correlate(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run a request with its correlation id bound: ``X-Request-ID`` over HTTP, else fresh."""
    state = request_state(ctx)
    value = getattr(state, "correlation_id", None) if state is not None else None
    correlation_id = str(value) if value else uuid.uuid4().hex
    bind_correlation_id(correlation_id)
    bind_principal(principal_of(ctx))  # whose runs and tasks the request's handlers see
    with logger.contextualize(correlation_id=correlation_id):
        params = dict(ctx.params) if isinstance(ctx.params, Mapping) else None
        try:
            return await call_next(ctx)
        except ValidationError as exc:  # the SDK's own params check: give it the payload
            where = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}"
                for e in exc.errors()[:5]
            )  # locations and messages only: pydantic's text would echo the values
            raise protocol_params_error(ctx.method, params, where) from None
        except MCPError as exc:
            if exc.error.code != INVALID_PARAMS or isinstance(exc.error.data, dict):
                raise
            raise protocol_params_error(ctx.method, params, exc.error.message) from None


class _TaskJobs:
    """``workflow.cancel``'s view of the Tasks runtime: task ids of runs not started yet."""

    def __init__(self, runtime: TaskRuntime) -> None:
        self.runtime = runtime

    def run_of(self, task_id: str) -> str | None:
        """The run of a task that was started before its run (None: no such task, no run)."""
        job = self.runtime.jobs.get(task_id)
        return job.run_id if job is not None else None

    async def task_state(self, task_id: str) -> str | None:
        """A task without a run: ``drafting`` or ``ended``; None for any other id."""
        return await self.runtime.task_state(task_id)

    async def cancel_job(self, task_id: str) -> bool:
        """Cancel a task whose run has not started (False: no such task, or it has a run)."""
        return await self.runtime.cancel_job(task_id)


#: the arguments that name what an audited tool acts on (never bodies, documents or inputs)
AUDIT_TARGETS = ("workflow_id", "new_id", "run_id", "operation_id", "name", "file")


def _callable(view: SessionView, principal: Principal) -> list[types.Tool]:
    """The view's tools ``principal`` may call (an admin: all of them, as listed)."""
    if principal.is_admin:
        return view.tools
    return [t for t in view.tools if principal.may(mcp_tool_scope(t.name, prefix=view.prefix))]


def _mentions_header(schema: Any) -> bool:
    """Whether a JSON Schema carries an ``x-mcp-header`` annotation anywhere."""
    if isinstance(schema, dict):
        return "x-mcp-header" in schema or any(_mentions_header(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_mentions_header(v) for v in schema)
    return False


class _TaskAwareServer(Server[Any]):
    """The SDK server announcing list-changed notifications and tasks.

    Tasks are a core capability on 2025-11-25 and the ``io.modelcontextprotocol/tasks``
    extension on 2026-07-28 (``Server.extensions``, set by :meth:`TaskRuntime.install`).
    """

    def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
        caps = super().get_capabilities(*args, **kwargs)
        if kwargs.get("protocol_version") in MODERN_PROTOCOL_VERSIONS:
            caps.logging = None  # deprecated there; log levels ride each request's _meta
            return caps
        for capability in (caps.tools, caps.resources, caps.prompts):
            if capability is not None:
                capability.list_changed = True
        caps.tasks = TaskRuntime.capability()
        caps.extensions = None  # the Tasks extension is 2026-07-28's; Tasks are core here
        return caps


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection: localhost always; ``MCP_ALLOWED_HOSTS`` adds more."""
    extra = list(settings.mcp_allowed_hosts)
    if "*" in extra:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
    if settings.host not in ("0.0.0.0", "::", "127.0.0.1", "localhost"):
        hosts += [settings.host, f"{settings.host}:*"]
    hosts += extra
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def session_app(
    endpoint: McpEndpoint, settings: Settings
) -> tuple[StreamableHTTPASGIApp, StreamableHTTPSessionManager]:
    """The ASGI app serving ``endpoint`` over streamable HTTP, and its session manager.

    The caller runs the manager while the app serves.
    """
    manager = ResumableSessionManager(
        app=endpoint.server,
        security_settings=transport_security(settings),
        json_response=False,
        stateless=False,
    )
    return StreamableHTTPASGIApp(manager), manager


async def serve_stdio(endpoint: McpEndpoint) -> None:
    """Serve the MCP endpoint on stdin/stdout until the client closes it."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await endpoint.server.run(read_stream, write_stream, endpoint.initialization_options())
