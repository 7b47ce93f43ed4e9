"""Health, readiness and metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dynamic_tools import __version__
from dynamic_tools.api.deps import ServicesDep

router = APIRouter(tags=["Health"])


@router.get("/healthz", summary="Liveness")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", summary="Readiness")
async def readyz(services: ServicesDep) -> JSONResponse:
    """Ready when the registry directory can be read (tool file problems are reported)."""
    checks: dict[str, Any] = {}
    tools_dir = services.settings.tools_dir
    checks["registry"] = {
        "ok": tools_dir.is_dir() or not tools_dir.exists(),
        "tools": len(services.registry.names()),
        "problems": len(services.registry.problems),
    }
    checks["llm"] = {"configured": services.llm is not None}
    ready = all(c.get("ok", True) for c in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks},
        status_code=200 if ready else 503,
    )


@router.get("/metrics", summary="Prometheus metrics")
async def metrics(request: Request) -> Response:
    """Metrics in the Prometheus text format."""
    return Response(
        generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST
    )
