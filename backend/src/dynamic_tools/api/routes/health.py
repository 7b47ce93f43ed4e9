"""Health, readiness and metrics."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from loguru import logger
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dynamic_tools import __version__
from dynamic_tools.api.authoring_models import Readiness
from dynamic_tools.api.deps import ServicesDep
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.persistence.db import ping
from dynamic_tools.selection.llm import OpenAIChatClient

router = APIRouter(tags=["Health"])


class Health(LazyModel):
    """The process is up, and its version."""

    status: Literal["ok"]
    version: str


@router.get("/healthz", summary="Liveness", response_model=Health)
async def healthz() -> Health:
    """The process is up."""
    return Health(status="ok", version=__version__)


LLM_SETTINGS = (
    "OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server); LLM_MODEL picks "
    "the model (default gpt-4o-mini)"
)


@router.get(
    "/readyz",
    summary="Readiness",
    response_model=Readiness,
    responses={
        200: {"description": "Ready"},
        503: {"model": Readiness, "description": "Not ready: a check failed (the body says which)"},
    },
)
async def readyz(services: ServicesDep, response: Response) -> Readiness:
    """Ready when the database answers and the registry can be read (problems are reported)."""
    checks: dict[str, Any] = {}
    tools_dir = services.settings.tools_dir
    checks["registry"] = {
        "ok": tools_dir.is_dir() or not tools_dir.exists(),
        "tools": len(services.registry.names()),
        "problems": len(services.registry.problems),
    }
    try:
        await asyncio.to_thread(ping, services.database)
        checks["database"] = {"ok": True, "backend": services.database.dialect.name}
    except Exception as exc:  # any driver error means "not ready"; the reason is logged
        logger.warning("readiness: the database does not answer ({})", type(exc).__name__)
        checks["database"] = {"ok": False, "error": type(exc).__name__}
    checks["llm"] = {"configured": services.llm is not None}
    if services.llm is None:  # what to set (names only, never values)
        checks["llm"]["needs"] = LLM_SETTINGS
    elif isinstance(services.llm, OpenAIChatClient):
        checks["llm"].update(services.llm.readiness())
    ready = all(c.get("ok", True) for c in checks.values())
    response.status_code = 200 if ready else 503
    return Readiness.model_validate({"status": "ready" if ready else "not_ready", "checks": checks})


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}}},
)
async def metrics(request: Request, services: ServicesDep) -> Response:
    """Metrics in the Prometheus text format: requests and pipeline, then workflow runs.

    In a worker thread: the run gauges are counted in the database at each scrape.
    """

    def scrape() -> bytes:
        app_metrics = generate_latest(request.app.state.metrics.registry)
        return app_metrics + generate_latest(services.run_metrics.registry)

    return Response(await asyncio.to_thread(scrape), media_type=CONTENT_TYPE_LATEST)
