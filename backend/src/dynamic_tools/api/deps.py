"""FastAPI dependencies: the services built in the lifespan, and the API token check."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

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


ServicesDep = Annotated[Services, Depends(get_services)]
RegistryDep = Annotated[ToolRegistry, Depends(get_registry)]
PipelineDep = Annotated[SingleShotPipeline, Depends(get_pipeline)]
WorkflowsDep = Annotated[WorkflowRepository, Depends(get_workflows)]
RunStoreDep = Annotated[RunStore, Depends(get_run_store)]
RunsDep = Annotated[RunService, Depends(get_runs)]


def token_matches(expected: str, authorization: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <expected>`` (constant time)."""
    if not authorization or not authorization.lower().startswith("bearer "):
        return False
    return hmac.compare_digest(authorization[7:].strip().encode(), expected.encode())
