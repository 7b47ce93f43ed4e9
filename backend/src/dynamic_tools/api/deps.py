"""FastAPI dependencies: the services built in the lifespan, and the API token check."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from dynamic_tools.bootstrap import Services
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


ServicesDep = Annotated[Services, Depends(get_services)]
RegistryDep = Annotated[ToolRegistry, Depends(get_registry)]
PipelineDep = Annotated[SingleShotPipeline, Depends(get_pipeline)]


def token_matches(expected: str, authorization: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <expected>`` (constant time)."""
    if not authorization or not authorization.lower().startswith("bearer "):
        return False
    return hmac.compare_digest(authorization[7:].strip().encode(), expected.encode())
