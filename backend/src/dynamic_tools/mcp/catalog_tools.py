"""The ``catalog.*`` tools of seed 003 §5.4: OpenAPI documents become tools without file edits.

Guidance for models (also in the descriptions): validate → preview → import; prefer local
paths inside the registry directory; surface warnings and violations to the user; remove only
when the user asks. Imports, toggles and removals reload the registry and announce
``tools/list_changed``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from dynamic_tools.mcp.authoring_tools import ANNOTATIONS, SAFETY_KEY
from dynamic_tools.mcp.confirmation import DRY_RUN
from dynamic_tools.mcp.entries import SessionView, ToolEntry
from dynamic_tools.mcp.results import Operation, object_schema, operation_handler
from dynamic_tools.tools.catalogs import CatalogService

_SOURCE = {
    "type": "string",
    "minLength": 1,
    "description": "A path inside the registry directory, or an http(s) URL on an allowed host.",
}
_SOURCE_TYPE = {"type": "string", "enum": ["path", "url"], "description": "Inferred if omitted."}
_NAME = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"}
_COMMON = {"source": _SOURCE, "source_type": _SOURCE_TYPE, "base_url": {"type": "string"}}


def add_catalog_tools(view: SessionView, catalogs: CatalogService) -> None:
    """Offer the five catalog tools in ``view``."""
    c = catalogs

    async def validate(a: dict[str, Any]) -> dict[str, Any]:
        return await c.validate_openapi(
            a["source"], source_type=a.get("source_type"), base_url=a.get("base_url")
        )

    async def preview(a: dict[str, Any]) -> dict[str, Any]:
        return await c.preview_import(
            a["source"],
            a["catalog"],
            prefix=a.get("prefix"),
            include=a.get("include"),
            base_url=a.get("base_url"),
            max_preview_tokens=a.get("max_preview_tokens"),
            source_type=a.get("source_type"),
        )

    async def import_(a: dict[str, Any]) -> dict[str, Any]:
        return await c.import_openapi(
            a["source"],
            a["catalog"],
            prefix=a.get("prefix"),
            overwrite=bool(a.get("overwrite", False)),
            enabled=bool(a.get("enabled", True)),
            include=a.get("include"),
            base_url=a.get("base_url"),
            source_type=a.get("source_type"),
        )

    async def set_enabled(a: dict[str, Any]) -> dict[str, Any]:
        return await c.set_enabled(a["catalog"], bool(a["enabled"]))

    async def remove(a: dict[str, Any]) -> dict[str, Any]:
        return await c.remove(a["catalog"], remove_manifest=bool(a.get("remove_manifest", False)))

    async def remove_preview(a: dict[str, Any]) -> dict[str, Any]:
        catalog = c.get(str(a["catalog"]))  # NotFoundError as the removal would say
        tools = int(catalog.get("registered_tools") or 0)
        manifest = bool(a.get("remove_manifest", False))
        also = " and its generated tools file" if manifest else " (its tools file is kept)"
        return {
            "summary": f"Remove the catalog '{catalog['name']}'{also}: its {tools} tool(s) "
            "are no longer offered.",
            "catalog": catalog["name"],
            "tools": tools,
            "remove_manifest": manifest,
        }

    include = {"type": "array", "items": {"type": "string"}, "description": "Operations to take."}
    specs: list[tuple[str, str, str, dict[str, Any], Operation, bool]] = [
        (
            "catalog.validate_openapi",
            "safe",
            "Check an OpenAPI 2.0/3.x document: kind, operation count, warnings, violations. "
            "Writes nothing. Step 1 of: validate → preview → import.",
            object_schema(_COMMON, ["source"]),
            validate,
            False,
        ),
        (
            "catalog.preview_import",
            "safe",
            "Dry-run an import: projected command count, group prefixes, value providers, name "
            "conflicts, optional token-capped preview of the commands. Writes nothing.",
            object_schema(
                {
                    **_COMMON,
                    "catalog": _NAME,
                    "prefix": {"type": "string"},
                    "include": include,
                    "max_preview_tokens": {"type": "integer", "minimum": 1},
                },
                ["source", "catalog"],
            ),
            preview,
            False,
        ),
        (
            "catalog.import_openapi",
            "standard",
            "Import a validated OpenAPI document as a catalog: writes its config and generated "
            "tools under the runtime directory, enabled by default; 'conflict' if the catalog "
            "exists unless overwrite=true. Show the user the warnings.",
            object_schema(
                {
                    **_COMMON,
                    "catalog": _NAME,
                    "prefix": {"type": "string"},
                    "include": include,
                    "overwrite": {"type": "boolean", "default": False},
                    "enabled": {"type": "boolean", "default": True},
                },
                ["source", "catalog"],
            ),
            import_,
            True,
        ),
        (
            "catalog.set_enabled",
            "standard",
            "Enable or disable an imported catalog's tools without deleting anything.",
            object_schema(
                {"catalog": _NAME, "enabled": {"type": "boolean"}}, ["catalog", "enabled"]
            ),
            set_enabled,
            True,
        ),
        (
            "catalog.remove",
            "destructive",
            "Remove an imported catalog (and, with remove_manifest=true, its generated tools "
            "file). Only when the user explicitly asks for deletion. The user is asked to "
            "confirm when the client can; dry_run=true only says what would be removed.",
            object_schema(
                {
                    "catalog": _NAME,
                    "remove_manifest": {"type": "boolean", "default": False},
                    "dry_run": DRY_RUN,
                },
                ["catalog"],
            ),
            remove,
            True,
        ),
    ]
    for name, safety, description, schema, operation, changes in specs:
        tool = types.Tool(
            name=name,
            description=f"[{safety}] {description}",
            input_schema=schema,
            annotations=ANNOTATIONS[safety],
            meta={SAFETY_KEY: safety},
        )
        confirm = remove_preview if name == "catalog.remove" else None
        handler = operation_handler(operation, changes_tools=changes)
        view.add(ToolEntry(tool, "catalog", handler, preview=confirm))
