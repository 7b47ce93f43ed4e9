"""Builds the registry, clients and services from :class:`Settings` (no work at import time).

:func:`build_services` only constructs objects; :meth:`Services.start` (the app's lifespan)
does the I/O in this order: database migrations → workflow repository load → launcher start.
:meth:`Services.aclose` stops the launcher first (local runs are cancelled and record it), then
the run store, the database and the clients, and flushes the spans.

Telemetry: tracing is on only when the standard ``OTEL_*`` variables say so
(:meth:`Tracing.from_env`); then the tool runner and the event sink given to the launcher are
wrapped by :class:`RunTracing` (the engine is unchanged). Run metrics are always kept: the run
store tells :class:`RunMetrics` of every event it stores.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import httpx
from loguru import logger
from sqlalchemy import Engine

from dynamic_tools.access.audit import AuditLog
from dynamic_tools.access.authenticate import Authenticator, BearerVerifier
from dynamic_tools.access.issuer import IssuerClient
from dynamic_tools.access.keys import ApiKeyStore
from dynamic_tools.access.tokens import OAuthVerifier
from dynamic_tools.definitions.arazzo.catalog import WorkflowStore
from dynamic_tools.definitions.authoring import WorkflowAuthoring
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.document_workers import DocumentWorkers
from dynamic_tools.engine.ports import EventSink, ToolRunner
from dynamic_tools.execution.launcher import LocalLauncher, RunLauncher
from dynamic_tools.execution.reconcile import RunReconciler
from dynamic_tools.execution.runs import RunService
from dynamic_tools.execution.scheduler import Scheduler
from dynamic_tools.execution.session_query import AgentQuery
from dynamic_tools.execution.tool_runner import HttpToolRunner
from dynamic_tools.execution.webhooks import WebhookReceiver
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.http.invoker import ToolInvoker
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.mcp.session_sources import SessionSources
from dynamic_tools.observability.run_metrics import RunMetrics, record_takeover
from dynamic_tools.observability.run_tracing import RunTracing
from dynamic_tools.observability.tracing import Tracing
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.item_journal import ItemJournal
from dynamic_tools.persistence.markdown_store import MarkdownSessionStore
from dynamic_tools.persistence.recipe_store import RecipeStore
from dynamic_tools.persistence.run_scopes import RunScopeStore, session_key
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.persistence.trigger_store import TriggerStore
from dynamic_tools.redaction import redactor
from dynamic_tools.selection.capabilities import declared
from dynamic_tools.selection.llm import LLMClient, OpenAIChatClient
from dynamic_tools.selection.pipeline import PipelineOptions, SingleShotPipeline
from dynamic_tools.selection.query_agent import QueryAgent, QueryBudget
from dynamic_tools.settings import Settings
from dynamic_tools.tools.catalogs import CatalogService
from dynamic_tools.tools.registry import ToolRegistry

DEMO_API_PREFIX = "/demo/travel"
SEEDED_FOLDERS = ("tools", "workflows", "catalogs", "markdown")
INTERRUPTED = "the server stopped before the run ended (runs of the local launcher are not durable)"


#: documents an MCP session brings by URL are checked again (conditional requests) when asked
#: for this long after their last check; a GraphQL endpoint is introspected again after
#: SESSION_INTROSPECT_S
SESSION_REFETCH_S = 1.0
SESSION_INTROSPECT_S = 60.0


@dataclass
class Services:
    """Everything the edges (API, MCP, CLI) use, built once per process."""

    settings: Settings
    registry: ToolRegistry
    guard: TargetGuard
    http_client: httpx.AsyncClient
    sender: HttpSender
    invoker: ToolInvoker
    llm: LLMClient | None
    pipeline: SingleShotPipeline
    query_agent: QueryAgent
    database: Engine
    workflows: WorkflowRepository
    run_store: RunStore
    recipe_store: RecipeStore
    markdown_store: MarkdownSessionStore
    session_sources: SessionSources
    tool_runner: ToolRunner
    launcher: RunLauncher
    runs: RunService
    triggers: TriggerStore
    scheduler: Scheduler
    webhooks: WebhookReceiver
    catalogs: CatalogService
    authoring: WorkflowAuthoring
    tracing: Tracing
    run_metrics: RunMetrics
    keys: ApiKeyStore
    audit: AuditLog
    authenticator: Authenticator
    _reconciling: asyncio.Task[None] | None = field(default=None, repr=False)
    _scheduling: asyncio.Task[None] | None = field(default=None, repr=False)
    _stop_scheduling: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    async def start(self) -> None:
        """Probe the LLM (in the background), migrate, load the workflows, start the launcher."""
        if isinstance(self.llm, OpenAIChatClient):
            self.llm.start_probe()
        await asyncio.to_thread(migrate, self.database)
        problems = await asyncio.to_thread(self.workflows.reload)
        for problem in problems:
            logger.bind(**problem.to_dict()).warning(
                "workflow file problem: {} ({})", problem.file, problem.message
            )
        logger.info("loaded {} workflows", len(self.workflows.list()))
        if not self.launcher.durable:  # its runs died with the last process
            interrupted = await self.run_store.interrupt_unfinished(INTERRUPTED)
            if interrupted:
                logger.warning("marked {} unfinished runs as failed", len(interrupted))
        await self.launcher.launch()
        if self.launcher.durable:  # the view and the journal must agree
            reconciler = RunReconciler(self.run_store, self.launcher)
            await reconciler.once()
            interval = self.settings.failover_check_s
            if self.settings.uses_postgres and interval > 0:  # runs end on other replicas too
                self._reconciling = asyncio.create_task(
                    reconciler.run_every(max(interval, 5.0)), name="reconcile-runs"
                )
        if self.settings.schedules_enabled:
            self._stop_scheduling.clear()
            self._scheduling = asyncio.create_task(
                self.scheduler.run_forever(self._stop_scheduling), name="scheduler"
            )

    async def aclose(self) -> None:
        """Stop the launcher (cancelling local runs), then close the store and the clients."""
        if self._scheduling is not None:
            self._stop_scheduling.set()
            await asyncio.gather(self._scheduling, return_exceptions=True)
            self._scheduling = None
        if self._reconciling is not None:
            self._reconciling.cancel()
            await asyncio.gather(self._reconciling, return_exceptions=True)
            self._reconciling = None
        try:
            await self.launcher.shutdown()
            await self.run_store.aclose()
        finally:
            self.database.dispose()
            await self.http_client.aclose()
            await asyncio.to_thread(self.workflows.workers.close)
            if isinstance(self.llm, OpenAIChatClient):
                await self.llm.aclose()
            await asyncio.to_thread(self.tracing.shutdown)  # exports the spans still batched


def seed_registry(settings: Settings) -> list[str]:
    """Copy the example folders into an empty registry root; returns what was copied.

    Each folder goes where the server reads it (the workflows to ``REGISTRY_WORKFLOWS_PATH``
    when that is set). The source directory is only read. A folder that already exists there
    is left as it is, so a user's edits survive restarts.
    """
    source = settings.seed_examples_from
    if source is None or not source.is_dir():
        return []
    root = settings.registry_root
    root.mkdir(parents=True, exist_ok=True)
    # each folder where the server reads it: REGISTRY_WORKFLOWS_PATH moves the workflows
    places = {
        "tools": settings.tools_dir,
        "workflows": settings.workflows_dir,
        "catalogs": settings.catalogs_dir,
    }
    copied = []
    for folder in SEEDED_FOLDERS:
        src, dst = source / folder, places.get(folder, root / folder)
        if src.is_dir() and not dst.exists():
            shutil.copytree(src, dst)
            _make_writable(dst)
            copied.append(folder)
    return copied


def _make_writable(path: Path) -> None:
    for item in [path, *path.rglob("*")]:
        item.chmod(item.stat().st_mode | 0o200)


def make_secret_lookup(settings: Settings):  # type: ignore[no-untyped-def]
    """A secret lookup that reads through settings and registers the value for redaction."""

    def lookup(name: str) -> str | None:
        value = settings.secret(name)
        if value:
            redactor.add(value)
        return value

    return lookup


def make_llm(settings: Settings, tracing: Tracing | None = None) -> LLMClient | None:
    """The OpenAI-compatible client, or None when no LLM is configured."""
    if not settings.llm_configured:
        return None
    import openai  # a large package: loaded only when an LLM is configured

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"
    client = openai.AsyncOpenAI(
        api_key=key,
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout_s,
        max_retries=0,  # the adapter retries, counting each attempt
    )
    forced = None if settings.llm_tool_choice == "best" else settings.llm_tool_choice
    return OpenAIChatClient(
        client,
        model=settings.llm_model,
        tracing=tracing,
        capabilities=declared(
            settings.llm_capabilities,
            base_url=settings.openai_base_url,
            forced=forced,
            strict=settings.llm_strict,
        ),
        tool_choice=forced,
        strict=settings.llm_strict,
        max_tokens=settings.llm_max_tokens,
        text_max_tokens=settings.llm_text_max_tokens,
        max_retries=settings.llm_max_retries,
        timeout_s=settings.llm_timeout_s,
    )


def make_registry(settings: Settings, *, tools_dir: Path | None = None) -> ToolRegistry:
    """The tool registry of ``settings`` (or of ``tools_dir`` instead), not loaded yet."""
    return ToolRegistry(tools_dir or settings.tools_dir, variables=settings.template_variables())


def make_workflows(
    settings: Settings, registry: ToolRegistry, *, workers: DocumentWorkers | None = None
) -> WorkflowRepository:
    """The workflow repository of ``settings``, checking calls against ``registry``; not loaded."""
    return WorkflowRepository(
        settings.workflows_dir, known_tools=registry.input_schemas, workers=workers
    )


def load_definitions(settings: Settings) -> tuple[ToolRegistry, WorkflowRepository]:
    """The registry and the workflow repository of ``settings``, loaded (the CLI's view)."""
    registry = make_registry(settings)
    registry.reload()
    workflows = make_workflows(settings, registry)
    workflows.reload()
    return registry, workflows


def make_http_client(
    settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The outbound HTTP client: no redirects, no proxy settings from the environment."""
    return httpx.AsyncClient(
        timeout=settings.http_timeout_s,
        follow_redirects=False,
        trust_env=False,
        transport=transport,
        verify=_tls_context(),
    )


@cache
def _tls_context() -> ssl.SSLContext:
    """The outbound TLS context, httpx's default (certifi's CAs), made once per process.

    Loading the CA file takes ~80 ms, paid by every app a process makes (tests make hundreds).
    """
    return httpx.create_ssl_context()


def make_catalogs(
    settings: Settings,
    *,
    registry: ToolRegistry,
    guard: TargetGuard,
    http_client: httpx.AsyncClient,
    tracing: Tracing | None = None,
    workers: DocumentWorkers | None = None,
    any_local_path: bool = False,
    workflows: WorkflowStore | None = None,
) -> CatalogService:
    """The catalog service: catalogs in ``<registry root>/catalogs``.

    Documents are read through ``guard`` (URLs) and, for local paths, only inside the registry
    root unless ``any_local_path`` (the operator's CLI, reading the user's own files). The
    server and the CLI both build it here.
    """
    fetcher = DocumentFetcher(
        client=http_client,
        guard=guard,
        local_roots=None if any_local_path else [settings.registry_root],
        timeout_s=settings.http_timeout_s,
        deadline_s=settings.tool_call_deadline_s,
        tracing=tracing,
    )
    return CatalogService(
        catalogs_dir=settings.catalogs_dir,
        registry=registry,
        fetcher=fetcher,
        workers=workers,
        secret=settings.secret,
        workflows=workflows,
    )


def make_guard(settings: Settings) -> TargetGuard:
    """The SSRF guard: the configured allow-list and mode, and this server's own address.

    This server is reachable only under the demo API's prefix (when the demo is on), never
    its admin routes.
    """
    guard = TargetGuard(settings.allowed_target_hosts, mode=settings.target_hosts_mode)
    url = httpx.URL(settings.base_url)
    prefixes = [url.path.rstrip("/") + DEMO_API_PREFIX] if settings.demo_api_enabled else []
    guard.protect_own_address(
        url.host,
        url.port or (443 if url.scheme == "https" else 80),
        allowed_prefixes=prefixes,
        listen_port=settings.port,
    )
    return guard


def make_bearer_verifier(
    settings: Settings, *, http_client: httpx.AsyncClient, guard: TargetGuard
) -> BearerVerifier | None:
    """The OAuth access-token verifier when ``OAUTH_ISSUER`` is set, else None.

    README "Configuring an issuer"; the issuer is reached through the SSRF guard like every
    outbound call.
    """
    if settings.oauth_issuer is None:
        return None
    secret = settings.oauth_client_secret
    issuer = IssuerClient(
        issuer=settings.oauth_issuer,
        client=http_client,
        guard=guard,
        jwks_url=settings.oauth_jwks_url,
        introspection_url=settings.oauth_introspection_url,
        client_id=settings.oauth_client_id,
        client_secret=secret.get_secret_value() if secret else None,
        timeout_s=settings.http_timeout_s,
        deadline_s=settings.tool_call_deadline_s,
    )
    return OAuthVerifier(issuer, audiences=settings.oauth_audiences)


def make_launcher(
    settings: Settings, *, tools: ToolRunner, store: RunStore, events: EventSink | None = None
) -> RunLauncher:
    """The run launcher: the one place that chooses how runs execute.

    ``DURABLE_RUNS`` (default): the DBOS :class:`DurableLauncher` — runs survive kill -9 and
    restarts, a yield can be answered days later. Its journal is derived from
    ``DATABASE_URL`` (:attr:`Settings.durable_database_url`). On SQLite the one process of a
    journal uses the identity kept beside it (a restart on any port resumes its runs); on
    PostgreSQL each replica is ``EXECUTOR_ID`` (default: the host name). Otherwise the
    in-process :class:`LocalLauncher` (unfinished runs are marked failed on the next start).
    Events go to ``events`` (the store itself, or a wrapper of it), outcomes to the store.
    """
    events = events or store
    if settings.durable_runs:
        from dynamic_tools.execution.durable_config import DurableConfig
        from dynamic_tools.execution.durable_launcher import DurableLauncher
        from dynamic_tools.execution.journal_lock import adopt_legacy_journal, journal_identity

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        journal_url = settings.durable_database_url
        if settings.uses_postgres:
            executor_id = settings.effective_executor_id
        else:
            journal = settings.journal_file
            assert journal is not None
            if adopt_legacy_journal(journal, settings.data_dir):
                logger.warning("moved the run journal of an earlier version to {}", str(journal))
            executor_id = journal_identity(journal)
        config = DurableConfig(
            database_url=journal_url,
            executor_id=executor_id,
            run_concurrency=settings.run_concurrency,
            queue_poll_s=settings.run_queue_poll_s,
            failover_check_s=settings.failover_check_s,
            serving=settings.base_url,
            pool_size=settings.database_pool_size,
        )
        return DurableLauncher(
            config,
            tools=tools,
            events=events,
            on_finished=store.record_outcome_soon,
            items=ItemJournal(store.engine),
        )
    return LocalLauncher(tools=tools, events=events, on_finished=store.record_outcome_soon)


def _count_takeover(executor_id: str, workflows: list[str]) -> None:
    record_takeover(executor_id, len([w for w in workflows if "/" not in w]))  # runs, not children


def journal_in_use(settings: Settings) -> str | None:
    """Why this server cannot run on its journal now (another process holds it), or None.

    A fast, friendly check for the CLI before it starts serving; the launcher takes the lock
    for real when it launches.
    """
    journal = settings.journal_file
    if not settings.durable_runs or journal is None:
        return None
    from dynamic_tools.errors import ConfigurationError
    from dynamic_tools.execution.journal_lock import JournalLock

    lock = JournalLock(journal)
    try:
        lock.acquire()
    except ConfigurationError as exc:
        return exc.message
    lock.release()
    return None


def build_services(
    settings: Settings,
    *,
    llm: LLMClient | None = None,
    http_transport: httpx.AsyncBaseTransport | None = None,
    tool_runner: ToolRunner | None = None,
    tracing: Tracing | None = None,
) -> Services:
    """Build every service (no I/O but reading tool files; see :meth:`Services.start`).

    ``llm``, ``http_transport``, ``tool_runner`` and ``tracing`` (a provider with an in-memory
    exporter) let tests inject doubles; ``tracing`` defaults to what ``OTEL_*`` say.
    """
    tracing = tracing or Tracing.from_env()
    copied = seed_registry(settings)
    if copied:
        logger.info("seeded registry {} with {}", str(settings.registry_root), copied)
    registry = make_registry(settings)
    problems = registry.reload()
    for problem in problems:
        logger.bind(**problem.to_dict()).warning(
            "tool file problem: {} ({}): {}", problem.file, problem.field, problem.reason
        )
    logger.info("loaded {} tools from {}", len(registry.names()), str(settings.tools_dir))
    guard = make_guard(settings)
    http_client = make_http_client(settings, transport=http_transport)
    sender = HttpSender(
        http_client,
        guard,
        max_response_bytes=settings.http_max_response_bytes,
        deadline_s=settings.tool_call_deadline_s,
        tracing=tracing,
    )
    chosen_llm = llm if llm is not None else make_llm(settings, tracing)
    invoker = ToolInvoker(sender, make_secret_lookup(settings))
    pipeline = SingleShotPipeline(
        registry=registry,
        llm=chosen_llm,
        invoker=invoker,
        options=PipelineOptions(
            top_k=settings.selection_top_k,
            validation_retries=settings.llm_validation_retries,
            format_max_chars=settings.format_max_chars,
            context_max_chars=settings.llm_context_max_chars,
        ),
        tracing=tracing,
    )
    query_agent = QueryAgent(
        llm=chosen_llm,
        invoker=invoker,
        budget=QueryBudget(
            max_steps=settings.query_max_steps,
            max_tokens=settings.query_max_tokens,
            time_s=settings.query_time_budget_s,
            step_max_rows=settings.query_step_max_rows,
            step_max_chars=settings.query_step_max_chars,
        ),
        top_k=settings.selection_top_k,
        context_max_chars=settings.llm_context_max_chars,
        prepared=pipeline.prepared,
        ranker=pipeline.ranker,
        not_configured_message=pipeline.options.not_configured_message,
        tracing=tracing,
    )
    database = make_engine(settings.effective_database_url, pool_size=settings.database_pool_size)
    store = RunStore(database)
    run_metrics = RunMetrics(store.unfinished_counts)
    store.observe(run_metrics.observe)
    key = settings.session_key.get_secret_value() if settings.session_key else None
    scopes = RunScopeStore(database, lambda: session_key(key, settings.data_dir))
    tools = tool_runner or HttpToolRunner(
        registry, invoker, scopes=scopes.get, query=AgentQuery(query_agent, registry)
    )
    events: EventSink = store
    if tracing.enabled:
        run_tracing = RunTracing(tracing)
        store.observe(run_tracing.observe)
        tools, events = run_tracing.tools(tools), run_tracing.events(store)
    document_workers = DocumentWorkers(
        workers=settings.document_workers,
        timeout_s=settings.document_timeout_s,
        memory_mb=settings.document_worker_memory_mb,
    )
    workflows = make_workflows(settings, registry, workers=document_workers)
    launcher = make_launcher(settings, tools=tools, store=store, events=events)
    launcher.on_takeover = _count_takeover  # takeovers are counted, automatic or by hand
    runs = RunService(workflows, store, launcher, scopes)
    triggers = TriggerStore(database)
    keys = ApiKeyStore(database)
    api_token = settings.api_token.get_secret_value() if settings.api_token else None
    return Services(
        settings=settings,
        registry=registry,
        guard=guard,
        http_client=http_client,
        sender=sender,
        invoker=invoker,
        llm=chosen_llm,
        pipeline=pipeline,
        query_agent=query_agent,
        database=database,
        workflows=workflows,
        run_store=store,
        recipe_store=RecipeStore(database),
        markdown_store=MarkdownSessionStore(database),
        session_sources=SessionSources(
            DocumentFetcher(
                client=http_client,
                guard=guard,
                local_roots=[settings.registry_root],
                timeout_s=settings.http_timeout_s,
                deadline_s=settings.tool_call_deadline_s,
                tracing=tracing,
            ),
            refetch_s=SESSION_REFETCH_S,
            introspect_s=SESSION_INTROSPECT_S,
            sender=sender,
            workers=document_workers,
        ),
        tool_runner=tools,
        launcher=launcher,
        runs=runs,
        triggers=triggers,
        scheduler=Scheduler(
            workflows,
            runs,
            triggers,
            poll_s=settings.scheduler_poll_s,
            count=run_metrics.trigger_event,
        ),
        webhooks=WebhookReceiver(
            workflows,
            runs,
            triggers,
            secret=make_secret_lookup(settings),
            per_minute=settings.webhook_rate_per_minute,
            count=run_metrics.trigger_event,
        ),
        catalogs=make_catalogs(
            settings,
            registry=registry,
            guard=guard,
            http_client=http_client,
            tracing=tracing,
            workers=document_workers,
            workflows=workflows,
        ),
        authoring=WorkflowAuthoring(workflows, registry, runs, store),
        tracing=tracing,
        run_metrics=run_metrics,
        keys=keys,
        audit=AuditLog(database),
        authenticator=Authenticator(
            api_token=api_token,
            keys=keys,
            bearer=make_bearer_verifier(settings, http_client=http_client, guard=guard),
        ),
    )
