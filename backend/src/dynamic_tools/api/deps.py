"""FastAPI dependencies: the services built in the lifespan, the principal and its scopes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from dynamic_tools.access.authenticate import require
from dynamic_tools.access.policy import UnknownAction, route_scope
from dynamic_tools.access.principals import LOCAL, Principal, Scope
from dynamic_tools.bootstrap import Services
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.execution.runs import RunService
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.selection.pipeline import SingleShotPipeline
from dynamic_tools.tools.registry import ToolRegistry


async def get_services(request: Request) -> Services:
    """The services of this app (built in the lifespan)."""
    services: Services = request.app.state.services
    return services


async def get_registry(services: Annotated[Services, Depends(get_services)]) -> ToolRegistry:
    """The tool registry."""
    return services.registry


async def get_pipeline(services: Annotated[Services, Depends(get_services)]) -> SingleShotPipeline:
    """The single-shot pipeline."""
    return services.pipeline


async def get_workflows(services: Annotated[Services, Depends(get_services)]) -> WorkflowRepository:
    """The workflow documents."""
    return services.workflows


async def get_run_store(services: Annotated[Services, Depends(get_services)]) -> RunStore:
    """The run store (views and events)."""
    return services.run_store


async def get_runs(services: Annotated[Services, Depends(get_services)]) -> RunService:
    """Start, resume and cancel runs."""
    return services.runs


def get_principal(request: Request) -> Principal:
    """Who makes the request (the edge authenticated it; :data:`LOCAL` without access control)."""
    principal: Principal = getattr(request.state, "principal", LOCAL)
    return principal


async def authorize(request: Request) -> None:
    """Refuse a request whose principal lacks the scope its route declares (``access/policy``).

    Every route of the app depends on this. A route missing from the table is refused as
    needing ``admin`` (a test makes sure none is missing).
    """
    route = request.scope.get("route")
    template = getattr(route, "path", request.url.path)
    method = "GET" if request.method == "HEAD" else request.method
    try:
        scope = route_scope(method, template)
    except UnknownAction:
        scope = Scope.ADMIN
    require(get_principal(request), scope, f"{method} {template}")


def note_audit_target(request: Request, target: str) -> None:
    """Name what an authoring route acted on, for its audit entry (the edge records it)."""
    request.scope.setdefault("state", {})["audit_target"] = target


ServicesDep = Annotated[Services, Depends(get_services)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
RegistryDep = Annotated[ToolRegistry, Depends(get_registry)]
PipelineDep = Annotated[SingleShotPipeline, Depends(get_pipeline)]
WorkflowsDep = Annotated[WorkflowRepository, Depends(get_workflows)]
RunStoreDep = Annotated[RunStore, Depends(get_run_store)]
RunsDep = Annotated[RunService, Depends(get_runs)]
