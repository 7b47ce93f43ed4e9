"""What one MCP session sees: its tools, resources and the handlers behind them.

:class:`McpSurface` is a view cache: it builds a :class:`SessionView` per distinct header
configuration by running its tool layers (``mcp/layers.py`` states their order, duplicate and
error rules) and keeps it until the registry, the workflows or the recipes change, or one of the
documents the session brings by URL (checked again with conditional requests). The same
view decides ``tools/list`` and which names ``tools/call`` accepts, so a filtered-out tool
cannot be called. It builds no store: stores and clients come from :class:`Services`.

Layers, in order: core (one tool per API operation, ``{prefix}_query``, the planner
``{prefix}_plan``, ``{prefix}_execute``), recipes ``r_*``, workflows ``w_*`` and
``workflow.resume`` (off with ``ENABLE_WORKFLOWS=false``, as are authoring and tasks),
authoring, tasks, catalogs, listings, markdown workflows.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import mcp_types as types
from loguru import logger

from dynamic_tools.definitions.authoring import Target, WorkflowAuthoring
from dynamic_tools.definitions.repository import PreparedRun
from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.nodes import CallSite
from dynamic_tools.engine.params import check_values
from dynamic_tools.errors import DynamicToolsError, InvalidInputError
from dynamic_tools.markdown.service import MarkdownWorkflowService
from dynamic_tools.mcp.api_tools import (
    QUERY_INPUT_SCHEMA,
    ApiCaller,
    api_tool,
    execute_input_schema,
    execute_tool,
    query_tool,
)
from dynamic_tools.mcp.authoring_resources import add_authoring_resources
from dynamic_tools.mcp.authoring_tools import AuthoringTools, TaskLookup
from dynamic_tools.mcp.catalog_tools import add_catalog_tools
from dynamic_tools.mcp.core_calls import run_execute, run_query
from dynamic_tools.mcp.entries import Handler, Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.errors import error_result
from dynamic_tools.mcp.layers import FunctionLayer, ToolLayer
from dynamic_tools.mcp.listing_tools import add_listing_tools
from dynamic_tools.mcp.markdown_tools import add_markdown_tools
from dynamic_tools.mcp.planner_tool import GoalPlanner, plan_tool
from dynamic_tools.mcp.prompts import AuthoringPrompts
from dynamic_tools.mcp.recipes import RecipeLayer
from dynamic_tools.mcp.resources import ResourceSet
from dynamic_tools.mcp.schedule_tools import add_schedule_tools
from dynamic_tools.mcp.session_config import SessionConfig
from dynamic_tools.mcp.session_sources import DOCUMENT, SessionWorkflows
from dynamic_tools.mcp.tasks import TaskFlows
from dynamic_tools.mcp.tool_meta import add_routing_meta
from dynamic_tools.mcp.workflow_text import tool_description
from dynamic_tools.mcp.workflow_tools import (
    RUN_RESULT_SCHEMA,
    CallEffect,
    WorkflowCalls,
    call_effect,
    workflow_annotations,
    workflow_input_schema,
)
from dynamic_tools.tools.graphql.endpoint import free_query_tool
from dynamic_tools.tools.hints import describe_tool, hint_block, merge_hints, parse_tool_hints
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.planning import summarize_workflow
from dynamic_tools.tools.scope import ToolScope

if TYPE_CHECKING:
    from dynamic_tools.bootstrap import Services

MAX_VIEWS = 64
MAX_LOGGED = 10_000  # problems of session headers already logged (once each, not per rebuild)
SEED_PLANNER = "_plan"
"""The planner's name in the design documents: ``{prefix}_plan`` answers to it too (unlisted)."""


@dataclass
class _Cached:
    """A built view, the hashes of the documents it was built from, and when they were checked."""

    view: SessionView
    digests: tuple[str, ...]
    checked: float


class McpSurface:
    """Builds and caches session views over the running :class:`Services`."""

    def __init__(self) -> None:
        self._services: Services | None = None
        self._views: OrderedDict[tuple[Any, ...], _Cached] = OrderedDict()
        self._lock = asyncio.Lock()
        self._logged: OrderedDict[str, None] = OrderedDict()  # problems warned of (_log_problems)
        self.recipes: RecipeLayer | None = None
        self.resources: ResourceSet | None = None
        self.tasks: TaskLookup | None = None  # set by the endpoint (workflow.cancel of a task)

    def attach(self, services: Services) -> None:
        """Serve ``services`` (called from the app's lifespan once they started)."""
        self._services = services
        self.sources = services.session_sources
        self._caller = ApiCaller(services.invoker)
        self.recipes = RecipeLayer(services.recipe_store, self._caller)
        self.authoring = services.authoring
        self.authoring_tools = AuthoringTools(
            services.workflows, services.runs, self.authoring, self.tasks
        )
        self.prompts = AuthoringPrompts(services.workflows, self.authoring)
        self.task_flows = TaskFlows(self.authoring, self.prompts, services.llm)
        self.planner = GoalPlanner(services.llm, self.task_flows, services.workflows)
        if self.resources is not None:
            self.resources.extra.clear()
            self.resources.templates_extra.clear()
            self.resources.template_readers.clear()
            add_authoring_resources(self.resources, services.workflows, self.authoring)
        self.markdown = MarkdownWorkflowService(
            services.markdown_store, services.settings.registry_root
        )
        self.layers = self.layers_for(services)
        self._views.clear()

    def layers_for(self, services: Services) -> list[ToolLayer]:
        """The tool layers of every session, in order (``mcp/layers.py``)."""
        assert self.recipes is not None
        layers: list[ToolLayer] = [FunctionLayer("core", self._add_api_layer), self.recipes]
        if services.settings.enable_workflows:
            layers += [
                FunctionLayer("workflows", self._add_workflow_layer),
                FunctionLayer("authoring", self.authoring_tools.add_to),
                FunctionLayer(
                    "schedules",
                    lambda view: add_schedule_tools(
                        view,
                        services.scheduler,
                        services.webhooks,
                        base_url=services.settings.base_url,
                    ),
                ),
                FunctionLayer("tasks", self.task_flows.add_to),
            ]
        markdown = self.markdown
        layers += [
            FunctionLayer("catalogs", lambda view: add_catalog_tools(view, services.catalogs)),
            FunctionLayer(
                "listings", lambda view: add_listing_tools(view, self.authoring.providers)
            ),
            FunctionLayer(
                "markdown",
                lambda view: add_markdown_tools(view, markdown, services.markdown_store),
            ),
        ]
        return layers

    @property
    def services(self) -> Services:
        """The running services; a clear error before the app has started."""
        if self._services is None:
            raise RuntimeError("the MCP surface is used before the server's services started")
        return self._services

    def cached_views(self) -> list[SessionView]:
        """The views built so far, newest first (no view is built here)."""
        return [cached.view for cached in reversed(self._views.values())]

    async def view(self, config: SessionConfig) -> SessionView:
        """The view of ``config``, built once per registry/workflow/recipe generation.

        A session that brings documents by URL has them checked again (at most once per the
        sources' ``refetch_s``, with conditional requests: ``mcp/session_sources.py``); its
        view is rebuilt when one of them changed, so an edit is seen on the next request.
        """
        services = self.services
        recipes = self.recipes.generation if self.recipes else 0
        key = (
            config.fingerprint,
            services.registry.generation,
            self.services.workflows.generation,
            recipes,
        )
        cached = self._views.get(key)
        if cached is not None:
            if not config.brings_documents:
                self._views.move_to_end(key)
                return cached.view
            if time.monotonic() - cached.checked < self.sources.refetch_s:
                return cached.view
            digests = await self._digests(config)
            if digests == cached.digests:
                cached.checked = time.monotonic()
                return cached.view
        async with self._lock:
            digests = await self._digests(config) if config.brings_documents else ()
            found = self._views.get(key)
            if found is None or found.digests != digests:
                found = _Cached(await self._build(config), digests, time.monotonic())
                self._views[key] = found
                while len(self._views) > MAX_VIEWS:
                    self._views.popitem(last=False)
            self._views.move_to_end(key)
        return found.view

    async def _digests(self, config: SessionConfig) -> tuple[str, ...]:
        """The content hashes of the documents the session brings (checked again if due).

        A document that cannot be read counts by its error; building the view reports it.
        """
        sources = self.sources
        checks: list[Callable[[], Awaitable[str]]] = []
        for url, header in (
            (config.schema_url, "x-schema-url"),
            (config.workflow_url, "x-workflow-url"),
            (config.workflow_resources_url, "x-workflow-resources"),
            (None if config.api_type == "graphql" else config.target_url, "x-target-url"),
        ):
            if url is not None:
                checks.append(partial(sources.digest, url, header))
        if config.api_type == "graphql" and config.target_url and config.schema_url is None:
            endpoint, headers = config.target_url, config.api_headers
            checks.append(partial(sources.introspection_digest, endpoint, headers))
        found = []
        for check in checks:
            try:
                found.append(await check())
            except DynamicToolsError as exc:
                found.append(f"error:{exc.code}:{exc.message}")
        return tuple(found)

    async def _build(self, config: SessionConfig) -> SessionView:
        services = self.services
        settings = services.settings
        prefix = config.api_name or settings.mcp_api_name
        core_tools: dict[str, ToolConfig] = {}
        if config.target_url is None:
            api_tools = {t.name: t for t in services.registry.all()}
            label = f"{prefix} API"
        elif config.api_type == "graphql":
            api = await self.sources.graphql(
                config.target_url, config.api_headers, config.schema_url
            )
            api_tools = api.tools
            label = f"{urlsplit(config.target_url).netloc} GraphQL API"
            assert api.schema_sdl is not None
            core_tools = graphql_core_tools(prefix, label, config, api.schema_sdl)
        else:
            api = await self.sources.api(config.target_url)
            api_tools = api.tools
            label = f"{api.title or prefix} API"
        overrides = parse_tool_hints(config.tool_hints_raw)
        view = SessionView(
            config=config,
            prefix=prefix,
            label=label,
            api_tools=api_tools,
            hints={n: merge_hints(t, overrides.get(n)) for n, t in api_tools.items()},
            workflows={},
            domains={},
            core_tools=core_tools,
        )
        if settings.enable_workflows:
            await self._load_workflows(view)
        for layer in self.layers:
            await layer.extend(view)
        _hint_other_tools(view, overrides)
        add_routing_meta(view)
        view.tools = [e.tool for e in view.entries.values()]
        _log_problems(view, self._logged)
        return view

    async def _load_workflows(self, view: SessionView) -> None:
        """Server workflows or X-Workflow-URL's; guides of X-Workflow-Resources."""
        services, config = self.services, view.config
        if config.workflow_url is None:
            for summary in services.workflows.list():
                if summary.valid:
                    view.workflows[summary.id] = services.workflows.workflow(summary.id)
                    view.domains[summary.id] = summary.domain
        else:
            try:
                found = await self.sources.workflows(
                    config.workflow_url,
                    "x-workflow-url",
                    known_tools=_callable_tools(view, services.registry.input_schemas()),
                )
            except DynamicToolsError as exc:  # not read, or not a workflow document at all
                _note_unloaded(view, "X-Workflow-URL", config.workflow_url, exc)
                found = SessionWorkflows(None, "", [])
            _note_problems(view, "X-Workflow-URL", config.workflow_url, found.problems)
            view.document = found.document
            view.document_version = found.content_hash[:16]
            if found.document is not None:
                for workflow_id in found.valid:
                    view.workflows[workflow_id] = found.document.workflows[workflow_id]
                    view.domains[workflow_id] = found.document.domain
        if config.workflow_resources_url is not None:
            await self._load_guides(view, config.workflow_resources_url)

    async def _load_guides(self, view: SessionView, url: str) -> None:
        """X-Workflow-Resources: a markdown guide, or workflows served as guides only."""
        try:
            guides = await self.sources.workflows(url, "x-workflow-resources", known_tools=None)
        except DynamicToolsError as exc:  # not read: the session goes on without its guides
            _note_unloaded(view, "X-Workflow-Resources", url, exc)
            return
        _note_problems(view, "X-Workflow-Resources", url, guides.problems)
        if guides.guide is not None:
            domains = set(view.domains.values())
            domain = domains.pop() if len(domains) == 1 else view.prefix
            view.guide_texts[domain] = guides.guide
            return
        assert guides.document is not None or not guides.valid
        for workflow_id in guides.valid:
            if workflow_id in view.workflows:
                _note_problems(
                    view,
                    "X-Workflow-Resources",
                    url,
                    [
                        {
                            "workflow": workflow_id,
                            "violations": [
                                {
                                    "path": f"workflows.{workflow_id}",
                                    "rule": "collision",
                                    "message": f"'{workflow_id}' is also a served workflow "
                                    f"(w_{workflow_id}); the served one is shown",
                                    "severity": "warning",
                                }
                            ],
                        }
                    ],
                )
                continue
            assert guides.document is not None
            view.guides[workflow_id] = guides.document.workflows[workflow_id]
            view.domains.setdefault(workflow_id, guides.document.domain)

    # --- the core layer: API tools, query, planner, execute ----------------------------------
    def _add_api_layer(self, view: SessionView) -> None:
        services = self.services
        caller = self._caller
        describe = services.settings.enable_tool_hints
        for config in view.api_tools.values():
            description = _describe(config, view, describe)
            view.add(
                ToolEntry(
                    api_tool(config, description=description), "api", _api_handler(caller, config)
                )
            )
        names = list(view.api_tools)
        if names or view.core_tools:
            read_only = not view.config.allow_unsafe
            query = query_tool(
                view.prefix, view.label, names, graphql=bool(view.core_tools), read_only=read_only
            )
            view.add(ToolEntry(query, "core", self._query))
            planner = _plan_handler(view, self.planner)
            view.add(ToolEntry(plan_tool(view.prefix, view.label), "planner", planner))
            view.aliases[SEED_PLANNER] = f"{view.prefix}_plan"
            free = view.core_tools.get(f"{view.prefix}_execute")
            if free is None:
                execute = execute_tool(view.prefix, view.label, names)
                view.add(ToolEntry(execute, "core", _execute_handler(caller)))
            else:
                execute = api_tool(free, description=free.description)
                view.add(ToolEntry(execute, "core", _api_handler(caller, free, composed=True)))

    async def _query(self, call: ToolCall) -> Result:
        listener = self.recipes.learn if self.recipes is not None else None
        return await run_query(self.services.query_agent, call, listener=listener)

    # --- the workflow layer -----------------------------------------------------------------
    def _add_workflow_layer(self, view: SessionView) -> None:
        services = self.services
        calls = WorkflowCalls(services.runs, services.run_store)
        tools = {t.name: t for t in services.registry.all()}
        tools |= {**view.api_tools, **view.core_tools}
        workflows = (
            view.document.workflows
            if view.document is not None
            else services.workflows.definitions()
        )

        choices = list(view.choices().values())

        def effect_of(site: CallSite) -> CallEffect:
            return call_effect(site, tools, query=f"{view.prefix}_query", query_choices=choices)

        for workflow_id, workflow in view.workflows.items():
            tool = types.Tool(
                name=f"w_{workflow_id}",
                description=tool_description(
                    workflow_id, workflow, domain=view.domains[workflow_id]
                ),
                input_schema=workflow_input_schema(workflow),
                output_schema=RUN_RESULT_SCHEMA,
                annotations=workflow_annotations(workflow_id, workflows, effect_of),
                execution=types.ToolExecution(task_support="optional"),
            )
            handler = (
                _workflow_handler(calls, workflow_id)
                if view.document is None
                else _document_handler(calls, view, workflow_id)
            )
            view.add(
                ToolEntry(
                    tool,
                    "workflow",
                    handler,
                    start_task=_run_starter(self.authoring, view, workflow_id),
                    check=_params_check(workflow),
                )
            )
        if view.workflows:
            view.add(ToolEntry(RESUME_TOOL, "workflow", _resume_handler(calls)))


RESUME_TOOL = types.Tool(
    name="workflow.resume",
    description=(
        "Answer the input a workflow run is waiting for (a w_* call that returned status "
        "'waiting_input'), then follow the run to its end or its next question. values are "
        "checked against the expected fields the waiting result listed."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "run_id": {"type": "string", "minLength": 1},
            "values": {
                "type": "object",
                "description": "The answer: one entry per expected field.",
            },
            "node_id": {"type": "string", "description": "Optional: the yield to answer."},
        },
        "required": ["run_id", "values"],
        "additionalProperties": False,
    },
    output_schema=RUN_RESULT_SCHEMA,
    annotations=types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
    ),
)


def _note_problems(
    view: SessionView, header: str, url: str | None, problems: list[dict[str, Any]]
) -> None:
    """Keep what a session's headers could not serve (a resource and a log message show it).

    Each problem is ``{header, url, workflow | tool, violations}``, kept once; what it names
    is left out and everything else is served (docs/design-sources.md#tool-discovery-design).
    """
    for problem in problems:
        view.problems.append({"header": header, **({"url": url} if url else {}), **problem})


def _log_problems(view: SessionView, logged: OrderedDict[str, None]) -> None:
    """A warning per problem of ``view``, once per configuration (not again when rebuilt)."""
    for problem in view.problems:
        key = hashlib.sha256(
            json.dumps([view.config.fingerprint, problem], sort_keys=True, default=str).encode()
        ).hexdigest()
        if key in logged:
            continue
        logged[key] = None
        while len(logged) > MAX_LOGGED:
            logged.popitem(last=False)
        what = "tool" if "tool" in problem else "workflow"
        header = problem["header"]
        logger.bind(header=header, **{what: problem.get(what)}).warning(
            "session problem: {} {} '{}' left out: {}",
            header,
            what,
            problem.get(what),
            "; ".join(str(v.get("message", "")) for v in problem.get("violations", []))[:500],
        )


def _note_unloaded(view: SessionView, header: str, url: str, exc: DynamicToolsError) -> None:
    """A document the session names that could not be read: reported, its content left out."""
    violations = [
        {**v, "path": v.get("path") or f"header:{header.lower()}"}
        for v in getattr(exc, "violations", None) or []
    ] or [{"path": f"header:{header.lower()}", "rule": "load", "message": exc.message}]
    problem = {
        "workflow": DOCUMENT,
        "violations": [{**v, "message": v.get("message") or exc.message} for v in violations],
    }
    _note_problems(view, header, url, [problem])


def _callable_tools(
    view: SessionView, registry: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """What a session's own workflows may call, with each tool's input schema.

    The registry, the session's API and its core tools; call arguments are checked with them.
    """
    query, execute = session_scope(view).core_tools
    free = view.core_tools.get(execute)
    core = {
        query: QUERY_INPUT_SCHEMA,
        execute: free.input_schema() if free else execute_input_schema(list(view.api_tools)),
    }
    own = {name: tool.input_schema() for name, tool in view.api_tools.items()}
    return {**registry, **own, **core}


def session_scope(view: SessionView) -> ToolScope:
    """The tools a run of the session's own workflow may call beyond the registry."""
    config = view.config
    own = view.api_tools if config.target_url is not None else {}
    return ToolScope(
        prefix=view.prefix,
        tools={**own, **view.core_tools},
        headers=config.api_headers,
        allow_unsafe=config.allow_unsafe,
    )


def graphql_core_tools(
    prefix: str, label: str, config: SessionConfig, sdl: str
) -> dict[str, ToolConfig]:
    """The free query tools of a GraphQL API, by the core tool they serve.

    The model's (read-only unless the session allows mutations) and ``{prefix}_execute``'s (a
    given query: every operation allowed when a saved workflow declares it; an MCP call of
    ``{prefix}_execute`` is model-composed and held to ``tools/safety.py`` by its handler).
    """
    assert config.target_url is not None
    model = free_query_tool(
        f"{prefix}_graphql",
        config.target_url,
        sdl,
        description=f"[{label}] Run ONE GraphQL operation written for this schema:\n{sdl}",
        allow_mutations=list(config.allow_unsafe),
    )
    given = free_query_tool(
        f"{prefix}_execute",
        config.target_url,
        sdl,
        description=f"[{label}] Execute a GraphQL operation directly: query (the operation's "
        "text, validated against the API's schema before it is sent), variables, and "
        "operationName when the document holds several. A mutation is refused unless "
        "X-Allow-Unsafe-Paths matches each of its root fields. GraphQL errors are reported "
        "with their paths.",
        allow_mutations=["*"],  # a workflow's declared call; MCP calls: _api_handler(composed)
    )
    return {f"{prefix}_query": model, f"{prefix}_execute": given}


def _hint_other_tools(view: SessionView, overrides: dict[str, ToolHints]) -> None:
    """Header hints for tools that are not API operations (e.g. ``<prefix>_query``).

    Design: docs/design-sources.md#tool-discovery-design. Hints are advice: one for a tool
    this session does not offer is left out and reported (``dynamic-tools://session/problems``
    and a warning), and the session is served without it.
    """
    unknown = sorted(set(overrides) - set(view.entries))
    _note_problems(
        view,
        "X-Tool-Hints",
        None,
        [
            {
                "tool": name,
                "violations": [
                    {
                        "path": f"header:x-tool-hints.{name}",
                        "rule": "unknown_tool",
                        "message": f"this session has no tool '{name}'; its hint is left out",
                        "severity": "warning",
                    }
                ],
            }
            for name in unknown
        ],
    )
    for name, hints in overrides.items():
        if name in unknown:
            continue
        entry = view.entries[name]
        block = hint_block(hints)
        if name not in view.api_tools and block:
            described = entry.tool.model_copy(
                update={"description": f"{entry.tool.description}\n{block}"}
            )
            view.entries[name] = replace(entry, tool=described)


def _describe(config: ToolConfig, view: SessionView, with_hints: bool) -> str:
    if not with_hints:
        return config.description
    return describe_tool(config, view.hints[config.name], api_label=view.label)


def _api_handler(caller: ApiCaller, config: ToolConfig, *, composed: bool = False) -> Handler:
    """The handler of an operation's own tool (declared) or a GraphQL ``{prefix}_execute``.

    ``composed``: the client's model wrote the document, so the safe-by-default rule applies.
    """

    async def handle(call: ToolCall) -> Result:
        session = call.view.config
        allow = session.allow_unsafe if composed else None
        return await caller.call(
            config, call.arguments, extra_headers=session.api_headers, composed=allow
        )

    return handle


def _execute_handler(caller: ApiCaller) -> Handler:
    async def handle(call: ToolCall) -> Result:
        return await run_execute(caller, call)

    return handle


def _params_check(workflow: Workflow) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """A ``w_*`` tool's arguments checked as its run checks its params (every violation)."""

    def check(arguments: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            check_values(workflow.params, arguments, what="params")
        except InvalidInputError as exc:
            return [{**v, "path": str(v["path"]).removeprefix("params.")} for v in exc.violations]
        return []

    return check


def _workflow_handler(calls: WorkflowCalls, workflow_id: str) -> Handler:
    async def handle(call: ToolCall) -> Result:
        return await calls.start(workflow_id, call.arguments, call.channel)

    return handle


def _document_handler(calls: WorkflowCalls, view: SessionView, workflow_id: str) -> Handler:
    """A workflow of the session's own document (X-Workflow-URL)."""
    document = view.document
    assert document is not None

    async def handle(call: ToolCall) -> Result:
        workflow = document.workflows[workflow_id]
        try:
            params = check_values(workflow.params, call.arguments)
        except InvalidInputError as exc:
            return error_result(exc)
        prepared = PreparedRun.of_draft(
            document, workflow_id, params, view.document_version or "", session_scope(view)
        )
        return await calls.start_prepared(prepared, call.channel)

    return handle


def _run_starter(
    authoring: WorkflowAuthoring, view: SessionView, workflow_id: str
) -> Callable[[ToolCall], Awaitable[str]]:
    """Task mode of ``w_<id>``: start the run; the task follows it."""

    async def start(call: ToolCall) -> str:
        if view.document is None:
            target = authoring.target(workflow_id=workflow_id, content=None)
        else:
            workflow = view.document.workflows[workflow_id]
            target = Target(
                workflow_id,
                workflow,
                view.document,
                view.document_version or "",
                False,
                session_scope(view),
            )
        run = await authoring.run(target, call.arguments, principal=call.channel.principal)
        return run.run_id

    return start


def _plan_handler(view: SessionView, planner: GoalPlanner) -> Handler:
    summaries = [summarize_workflow(w, wf) for w, wf in view.workflows.items()]
    schemas = {w: workflow_input_schema(wf) for w, wf in view.workflows.items()}
    tools = list(view.api_tools.values())

    async def handle(call: ToolCall) -> Result:
        return await planner.result(call, tools, summaries, schemas, view.hints)

    return handle


def _resume_handler(calls: WorkflowCalls) -> Handler:
    async def handle(call: ToolCall) -> Result:
        args = call.arguments
        return await calls.resume(
            str(args.get("run_id", "")),
            dict(args.get("values") or {}),
            args.get("node_id"),
            call.channel,
        )

    return handle
