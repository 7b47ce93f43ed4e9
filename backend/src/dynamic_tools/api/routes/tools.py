"""``/tools``: list, get, create, update and delete tool configs (files, written atomically)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request, Response, status

from dynamic_tools.api.deps import RegistryDep, ServicesDep, note_audit_target
from dynamic_tools.api.responses import BODY, PARAMS, errors, inline_schema
from dynamic_tools.api.tool_models import (
    ToolConfigSchema,
    ToolList,
    ToolsReloaded,
    ToolSummary,
    ToolView,
)
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.auth_status import SecretLookup, auth_view
from dynamic_tools.tools.models import TOOL_NAME_PATTERN, ToolConfig
from dynamic_tools.tools.registry import ToolRegistry, dump_tool

router = APIRouter(prefix="/tools", tags=["Tools"])

_EXAMPLE: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "api": {"method": "GET", "base_url": "https://api.example.com", "path": "/weather"},
    "parameters": {"city": {"type": "string", "in": "query", "required": True}},
    "auth": {"type": "api_key", "in": "query", "name": "appid", "secret": "secret:WEATHER_KEY"},
}

# Read as a mapping so a bad config answers ToolConfigError (file-format violations); the
# document shows the ToolConfig schema all the same.
ToolBody = Annotated[
    dict[str, Any], Body(examples=[_EXAMPLE], json_schema_extra=inline_schema(ToolConfig))
]
ToolName = Annotated[str, Path(pattern=TOOL_NAME_PATTERN, description="The tool's name.")]


def tool_view(registry: ToolRegistry, name: str, secret: SecretLookup) -> ToolView:
    """A tool as shown by the API: its file form plus what is derived from it.

    The resolved endpoint and schemas, and whether its secret is set (``auth_status``, never
    the value).
    """
    source = registry.get_source(name)
    resolved = registry.get(name)
    view = dump_tool(source)
    view["endpoint"] = f"{resolved.api.method} {resolved.api.base_url}{resolved.api.path}"
    view["input_schema"] = resolved.input_schema()
    view["effective_annotations"] = resolved.effective_annotations.model_dump()
    view["auth_status"] = auth_view(resolved, secret)
    return ToolView.model_validate(view)


DERIVED = ("endpoint", "input_schema", "effective_annotations", "auth_status")
"""Fields GET adds to a tool's file form: computed from it, so never written."""


def without_derived(body: dict[str, Any], shown: ToolView | None) -> dict[str, Any]:
    """``body`` without the derived fields GET showed, so what GET answers PUT accepts as is.

    A derived field given with another value than GET shows is refused by name: it cannot be
    set (change what it is derived from).

    Raises:
        InvalidInputError: a derived field differs from what it is.
    """
    answered = {} if shown is None else shown.model_dump(mode="json", by_alias=True)
    changed = [
        name for name in DERIVED if name in body and (shown is None or body[name] != answered[name])
    ]
    if changed:
        raise InvalidInputError(
            f"{', '.join(changed)} cannot be set: derived from the tool's api, parameters and "
            "annotations (change those, or leave the derived fields out)",
            violations=[
                {"path": name, "rule": "read_only", "message": "derived; cannot be set"}
                for name in changed
            ],
        )
    return {k: v for k, v in body.items() if k not in DERIVED}


def _summary(tool: ToolConfig, secret: SecretLookup) -> ToolSummary:
    return ToolSummary(
        name=tool.name,
        description=tool.description,
        method=tool.api.method,
        endpoint=f"{tool.api.base_url}{tool.api.path}",
        parameters={
            n: {**p.schema_, "in": p.location, "required": p.required}
            for n, p in tool.parameters.items()
        },
        hints=tool.hints.model_dump(exclude_defaults=True),
        annotations=tool.effective_annotations.model_dump(),
        auth=auth_view(tool, secret),
    )


@router.get("", summary="List tools", responses=errors(PARAMS), response_model=ToolList)
async def list_tools(
    registry: RegistryDep,
    services: ServicesDep,
    q: str | None = Query(default=None, description="Filter by text in name or description"),
) -> ToolList:
    """Every tool, and the problems of tool files that did not load.

    Each tool says how it authenticates and whether its secret is set (never the value).
    """
    tools = registry.all()
    if q:
        needle = q.lower()
        tools = [t for t in tools if needle in t.name.lower() or needle in t.description.lower()]
    return ToolList.model_validate(
        {
            "tools": [_summary(t, services.settings.secret) for t in tools],
            "problems": [p.to_dict() for p in registry.problems],
        }
    )


@router.get("/_schema", summary="The JSON Schema of a tool config", response_model=ToolConfigSchema)
async def tool_schema() -> ToolConfigSchema:
    """What ``POST /tools`` and ``PUT /tools/{name}`` accept (the UI makes its forms from it)."""
    return TOOL_SCHEMA


TOOL_SCHEMA = ToolConfigSchema.model_validate(
    ToolConfig.model_json_schema(by_alias=True, mode="validation")
)


@router.get(
    "/{name}",
    summary="Get a tool",
    responses=errors(PARAMS, 404),
    response_model=ToolView,
    response_model_exclude_unset=True,
)
async def get_tool(name: ToolName, registry: RegistryDep, services: ServicesDep) -> ToolView:
    """One tool in full."""
    return tool_view(registry, name, services.settings.secret)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Create a tool",
    responses=errors(BODY, 409),
    response_model=ToolView,
    response_model_exclude_unset=True,
)
async def create_tool(
    request: Request, registry: RegistryDep, services: ServicesDep, body: ToolBody
) -> ToolView:
    """Validate and write a new tool file ``<name>.yaml``; 409 if the name exists."""
    config = without_derived(body, None)
    if isinstance(config.get("name"), str):
        note_audit_target(request, f"name={config['name'][:128]}")
    tool = await asyncio.to_thread(registry.create, config)  # validates, writes, reloads
    return tool_view(registry, tool.name, services.settings.secret)


@router.put(
    "/{name}",
    summary="Replace a tool",
    responses=errors(BODY, 404),
    response_model=ToolView,
    response_model_exclude_unset=True,
)
async def update_tool(
    name: ToolName, registry: RegistryDep, services: ServicesDep, body: ToolBody
) -> ToolView:
    """Validate and rewrite the tool in the file it came from.

    What ``GET /tools/{name}`` answered is accepted as is: its derived fields (``endpoint``,
    ``input_schema``, ``effective_annotations``, ``auth_status``) are dropped when they are
    what GET shows.
    """
    shown = tool_view(registry, name, services.settings.secret)  # 404 for an unknown tool
    config = without_derived(body, shown)
    await asyncio.to_thread(registry.update, name, config)
    return tool_view(registry, name, services.settings.secret)


@router.delete(
    "/{name}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete a tool",
    responses=errors(PARAMS, 404),
)
async def delete_tool(name: ToolName, registry: RegistryDep) -> Response:
    """Remove the tool from its file."""
    await asyncio.to_thread(registry.delete, name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/_reload", summary="Reload tool files", response_model=ToolsReloaded)
async def reload_tools(registry: RegistryDep) -> ToolsReloaded:
    """Read the tools directory again (after editing files by hand)."""
    problems = await asyncio.to_thread(registry.reload)
    return ToolsReloaded.model_validate(
        {"tools": registry.names(), "problems": [p.to_dict() for p in problems]}
    )
