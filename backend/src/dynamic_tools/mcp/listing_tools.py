"""``command.list`` and ``provider.list``: the catalogs as read-only tools.

They answer what the resources ``command.catalog`` and ``provider.catalog`` hold, for clients
that call tools but do not read resources: every command this session can call (layer, schemas,
argument names, HTTP method, body arguments) and the value providers (list operations whose
results feed other operations' inputs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types

from dynamic_tools.mcp.authoring_resources import command_catalog
from dynamic_tools.mcp.authoring_tools import ANNOTATIONS, SAFETY_KEY
from dynamic_tools.mcp.entries import Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.results import data_result, object_schema
from dynamic_tools.tools.openapi.providers import ProviderContract

LAYERS = ["api", "core", "recipe", "planner", "workflow", "authoring", "task", "catalog"]
LAYERS += ["markdown"]


def add_listing_tools(view: SessionView, providers: Callable[[], list[ProviderContract]]) -> None:
    """Offer ``command.list`` and ``provider.list`` in ``view``."""

    async def commands(call: ToolCall) -> Result:
        layer = call.arguments.get("layer")
        listed = [c for c in command_catalog(call.view) if layer is None or c["layer"] == layer]
        return data_result({"commands": listed, "count": len(listed)})

    async def provider_list(call: ToolCall) -> Result:
        found = [p.to_dict() for p in providers()]
        return data_result({"providers": found, "count": len(found)})

    tools: list[tuple[str, str, dict[str, Any], Any]] = [
        (
            "command.list",
            "Every command (tool) this session can call, with its layer, input and output "
            "schemas, argument names, required arguments, HTTP method and body arguments. "
            "Same content as the resource command.catalog.",
            object_schema(
                {
                    "layer": {
                        "type": "string",
                        "enum": LAYERS,
                        "description": "Only the commands of this layer.",
                    }
                }
            ),
            commands,
        ),
        (
            "provider.list",
            "The value providers: list operations whose results feed other operations' inputs "
            "(the provider, the output field, where the items are, the parameters it feeds). "
            "Same content as the resource provider.catalog.",
            object_schema({}),
            provider_list,
        ),
    ]
    for name, description, schema, handler in tools:
        tool = types.Tool(
            name=name,
            description=f"[safe] {description}",
            input_schema=schema,
            annotations=ANNOTATIONS["safe"],
            meta={SAFETY_KEY: "safe"},
        )
        view.add(ToolEntry(tool, "catalog", handler))
