"""The app factory: ``create_app(settings)`` builds an app; services start in its lifespan."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import APIRouter, Depends, FastAPI
from starlette.middleware.gzip import GZipMiddleware

from dynamic_tools import __version__
from dynamic_tools.api.deps import authorize
from dynamic_tools.api.docs_pages import install_docs_pages
from dynamic_tools.api.edge import EdgeMiddleware
from dynamic_tools.api.errors import install_error_handlers
from dynamic_tools.api.mcp_mount import LazyMcp
from dynamic_tools.api.metrics import Metrics
from dynamic_tools.api.openapi_doc import complete_document
from dynamic_tools.api.routes import (
    access,
    authoring,
    catalogs,
    health,
    pipeline,
    runs,
    tools,
    triggers,
    well_known,
    workflows,
)
from dynamic_tools.api.routes.ui import install_ui
from dynamic_tools.bootstrap import DEMO_API_PREFIX, build_services
from dynamic_tools.demo.access import in_process_transport
from dynamic_tools.engine.ports import ToolRunner
from dynamic_tools.logs import configure_logging
from dynamic_tools.observability.tracing import Tracing
from dynamic_tools.selection.llm import LLMClient
from dynamic_tools.settings import Settings, get_settings


def create_app(
    settings: Settings | None = None,
    *,
    llm: LLMClient | None = None,
    http_transport: httpx.AsyncBaseTransport | None = None,
    tool_runner: ToolRunner | None = None,
    tracing: Tracing | None = None,
) -> FastAPI:
    """A new app. ``llm``, ``http_transport``, ``tool_runner``, ``tracing``: test doubles."""
    settings = settings or get_settings()
    demo = _demo(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings)
        services = build_services(
            settings,
            llm=llm,
            http_transport=http_transport or _own_demo_transport(settings, demo),
            tool_runner=tool_runner,
            tracing=tracing,
        )
        app.state.services = services
        try:
            await services.start()
            mcp.attach(services)
            # What start-up built lives as long as the app: the collector skips it from now on
            # (less work per collection, pages stay shared after a fork).
            if settings.freeze_startup_heap:
                gc.collect()
                gc.freeze()
            yield
        finally:
            if settings.freeze_startup_heap:
                gc.unfreeze()  # an app made again in this process (tests) starts afresh
            await mcp.aclose()
            await services.aclose()

    app = FastAPI(
        title="Dynamic Tools",
        version=__version__,
        description="Turn HTTP APIs into tools that LLMs use correctly.",
        lifespan=lifespan,
        # every route's scope, from the one table in access/policy.py
        dependencies=[Depends(authorize)],
        docs_url=None,  # /docs and /redoc come with their files (api/docs_pages.py), no CDN
        redoc_url=None,
    )
    app.state.settings = settings
    mcp = LazyMcp(settings)
    app.router.routes.extend(mcp.routes())
    app.state.mcp = mcp
    app.state.metrics = Metrics()
    install_error_handlers(app)
    app.add_middleware(
        EdgeMiddleware,
        metrics=app.state.metrics,
        token=settings.api_token.get_secret_value() if settings.api_token else None,
        max_body_bytes=settings.max_request_bytes,
        max_tool_body_bytes=settings.max_tool_request_bytes,
        max_hook_body_bytes=settings.webhook_max_body_bytes,
    )
    # JSON answers compressed for clients that accept it (server-sent events never are; the
    # UI bundle is sent precompressed by its own route).
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    complete_document(app, token=settings.access_control_configured)
    install_docs_pages(app)
    app.include_router(health.router)
    app.include_router(well_known.router)
    app.include_router(pipeline.router)
    app.include_router(tools.router)
    app.include_router(catalogs.router)
    app.include_router(workflows.router)
    app.include_router(runs.router)
    app.include_router(authoring.router)
    app.include_router(authoring.history)
    app.include_router(access.router)
    app.include_router(triggers.router)
    app.include_router(triggers.hooks)
    if demo is not None:
        app.include_router(demo, prefix=DEMO_API_PREFIX, tags=["Demo travel API"])

    install_ui(app)
    return app


def _demo(settings: Settings) -> APIRouter | None:
    """The demo travel API's router when the demo is enabled (``Settings.demo_api_enabled``)."""
    if not settings.demo_api_enabled:
        return None
    from dynamic_tools.demo.travel_api import create_travel_router

    return create_travel_router()


def _own_demo_transport(
    settings: Settings, demo: APIRouter | None
) -> httpx.AsyncBaseTransport | None:
    """With access control, the server's own calls to its demo, answered in-process.

    ``/demo/*`` then needs the token from outside like every route, while the tools whose base
    URL is this server (the travel example) reach the demo without one, on the same state.
    None: plain HTTP (no demo, or no access control: the demo is open anyway).
    """
    if demo is None or not settings.access_control_configured:
        return None
    return in_process_transport(settings.base_url, demo, DEMO_API_PREFIX)
