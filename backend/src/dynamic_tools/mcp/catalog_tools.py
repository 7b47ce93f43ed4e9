"""The ``catalog.*`` tools: OpenAPI documents become tools without file edits.

Guidance for models (also in the descriptions): validate → preview → import; prefer local
paths inside the registry directory; surface warnings and violations to the user; remove only
when the user asks. Imports, toggles and removals reload the registry and announce
``tools/list_changed``.

The design's argument names work beside the product's (:mod:`dynamic_tools.mcp.aliases`):

- ``catalog_title`` — on preview and import, the catalog's title; the catalog's name
  (``catalog``) is made from it when not given (``"Pet Store"`` → ``pet-store``). On
  ``set_enabled`` and ``remove`` it names the catalog by its title (or name);
- ``catalog_id`` — another name for ``catalog`` (``set_enabled``, ``remove``);
- ``vendor`` — stored with the catalog and shown in the preview;
- ``include_command_preview`` — ``true`` adds the token-capped command preview
  (``max_preview_tokens``, default 2,000); ``false`` with ``max_preview_tokens`` disagrees.

The document is ``source`` (a path or URL) or, as on ``/catalogs``, ``content`` (its text) with
``filename`` and ``files`` (the files it names, by relative path): exactly one of the two.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.aliases import Alias, alias_property, apply_aliases
from dynamic_tools.mcp.authoring_tools import safety_tool
from dynamic_tools.mcp.confirmation import CONFIRMATION_TOKEN, DRY_RUN
from dynamic_tools.mcp.entries import SessionView, ToolEntry
from dynamic_tools.mcp.results import Operation, object_schema, operation_handler
from dynamic_tools.tools.catalog_uploads import MAX_UPLOAD_FILES, Upload
from dynamic_tools.tools.catalogs import CatalogService, catalog_name_for

DEFAULT_PREVIEW_TOKENS = 2000

_SOURCE = {
    "type": "string",
    "minLength": 1,
    "description": "A path inside the registry directory, or an http(s) URL on an allowed host "
    "(or give content).",
}
_FILE_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": r"^[^\x00-\x1f\x7f\\]+$",
}
_SOURCE_TYPE = {"type": "string", "enum": ["path", "url"], "description": "Inferred if omitted."}
_NAME = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
    "description": "The catalog's name (its id); or give catalog_title.",
}
_TITLE = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "The catalog's title (default: the document's); the name is made from it "
    "when 'catalog' is not given.",
}
_TITLE_REF = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "The catalog's title (or name), instead of 'catalog' / 'catalog_id'.",
}
_VENDOR = {"type": "string", "maxLength": 200, "description": "Who provides the API (stored)."}
_COMMON = {
    "source": _SOURCE,
    "content": {
        "type": "string",
        "minLength": 1,
        "description": "The document's text, instead of a source.",
    },
    "filename": {
        **_FILE_NAME,
        "description": "With content: the document's file name (relative, no '..').",
    },
    "files": {
        "type": "object",
        "maxProperties": MAX_UPLOAD_FILES,
        "propertyNames": _FILE_NAME,
        "additionalProperties": {"type": "string"},
        "description": "With content: the files it names (an Arazzo document's OpenAPI "
        "sources), by path relative to it, e.g. './openapi.yaml' → its text.",
    },
    "source_type": _SOURCE_TYPE,
    "base_url": {
        "type": "string",
        "description": "The API's base URL instead of the document's servers; for a GraphQL "
        "schema (which holds no address), the endpoint's URL (required).",
    },
}
_ARAZZO = {
    "lenient": {
        "type": "boolean",
        "default": False,
        "description": "Arazzo documents: also read the shortcuts some runners accept "
        "($steps.x.name without .outputs, dotted bodies, source#/paths operation paths), "
        "each a warning.",
    },
    "base_urls": {
        "type": "object",
        "additionalProperties": {"type": "string", "minLength": 1},
        "description": "Arazzo documents: a base URL per source description name.",
    },
    "sources": {
        "type": "object",
        "additionalProperties": {"type": "string", "minLength": 1},
        "description": "Arazzo documents: read a source description from this path or URL "
        "instead (by name), e.g. a local copy of a remote OpenAPI description.",
    },
    "workflows": {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "description": "Arazzo documents: import only these workflows (their Arazzo ids); by "
        "default every one that can be converted, the others reported as left out with why.",
    },
}
CATALOG_ID = Alias("catalog_id", "catalog")


def add_catalog_tools(view: SessionView, catalogs: CatalogService) -> None:
    """Offer the five catalog tools in ``view``."""
    c = catalogs
    by_title = Alias("catalog_title", "catalog", c.name_for_title)

    def named(tool: str, a: dict[str, Any]) -> dict[str, Any]:
        """``catalog`` from ``catalog`` / ``catalog_id`` / ``catalog_title`` (must agree)."""
        return apply_aliases(
            tool, a, (CATALOG_ID, by_title), one_of=(("catalog", "catalog_id", "catalog_title"),)
        )

    async def validate(a: dict[str, Any]) -> dict[str, Any]:
        return _json(
            await c.validate_openapi(
                _document("catalog.validate_openapi", a),
                source_type=a.get("source_type"),
                base_url=a.get("base_url"),
            )
        )

    async def preview(a: dict[str, Any]) -> dict[str, Any]:
        a = _titled("catalog.preview_import", a)
        tokens = a.get("max_preview_tokens")
        wanted = a.get("include_command_preview")
        if wanted is False and tokens is not None:
            raise _disagree("include_command_preview", "max_preview_tokens", False, tokens)
        if wanted and tokens is None:
            tokens = DEFAULT_PREVIEW_TOKENS
        return _json(
            await c.preview_import(
                _document("catalog.preview_import", a),
                a["catalog"],
                title=a.get("catalog_title"),
                vendor=a.get("vendor"),
                prefix=a.get("prefix"),
                include=a.get("include"),
                base_url=a.get("base_url"),
                max_preview_tokens=tokens,
                source_type=a.get("source_type"),
                lenient=bool(a.get("lenient", False)),
                base_urls=a.get("base_urls"),
                sources=a.get("sources"),
                workflows=a.get("workflows"),
            )
        )

    async def import_(a: dict[str, Any]) -> dict[str, Any]:
        a = _titled("catalog.import_openapi", a)
        return _json(
            await c.import_openapi(
                _document("catalog.import_openapi", a),
                a["catalog"],
                title=a.get("catalog_title"),
                vendor=a.get("vendor"),
                prefix=a.get("prefix"),
                overwrite=bool(a.get("overwrite", False)),
                enabled=bool(a.get("enabled", True)),
                include=a.get("include"),
                base_url=a.get("base_url"),
                source_type=a.get("source_type"),
                lenient=bool(a.get("lenient", False)),
                base_urls=a.get("base_urls"),
                sources=a.get("sources"),
                workflows=a.get("workflows"),
            )
        )

    async def set_enabled(a: dict[str, Any]) -> dict[str, Any]:
        a = named("catalog.set_enabled", a)
        return _json(await c.set_enabled(a["catalog"], bool(a["enabled"])))

    async def remove(a: dict[str, Any]) -> dict[str, Any]:
        a = named("catalog.remove", a)
        return _json(
            await c.remove(a["catalog"], remove_manifest=bool(a.get("remove_manifest", False)))
        )

    async def remove_preview(a: dict[str, Any]) -> dict[str, Any]:
        a = named("catalog.remove", dict(a))
        catalog = c.get(str(a["catalog"]))  # NotFoundError as the removal would say
        tools = catalog.registered_tools or 0
        manifest = bool(a.get("remove_manifest", False))
        also = " and its generated tools file" if manifest else " (its tools file is kept)"
        return {
            "summary": f"Remove the catalog '{catalog.name}'{also}: its {tools} tool(s) "
            "are no longer offered.",
            "catalog": catalog.name,
            "tools": tools,
            "remove_manifest": manifest,
        }

    include = {"type": "array", "items": {"type": "string"}, "description": "Operations to take."}
    naming = {
        "catalog": _NAME,
        "catalog_id": alias_property(CATALOG_ID, _NAME),
        "catalog_title": _TITLE_REF,
    }
    specs: list[tuple[str, str, str, dict[str, Any], Operation, bool]] = [
        (
            "catalog.validate_openapi",
            "safe",
            "Check an OpenAPI 2.0/3.x document or a GraphQL schema (SDL or introspection JSON, "
            "base_url = the endpoint): kind, operation count, warnings, violations. An Arazzo "
            "1.0 document is checked against its JSON Schema and rules (its workflows, its "
            "OpenAPI sources read next to it), each problem with its path and line. "
            "Writes nothing. Step 1 of: validate → preview → import.",
            object_schema(_COMMON),
            validate,
            False,
        ),
        (
            "catalog.preview_import",
            "safe",
            "Dry-run an import: projected command count, group prefixes, value providers, name "
            "conflicts, optional token-capped preview of the commands "
            "(include_command_preview). Writes nothing. Give catalog (a name) or catalog_title.",
            object_schema(
                {
                    **_COMMON,
                    "catalog": _NAME,
                    "catalog_title": _TITLE,
                    "vendor": _VENDOR,
                    "prefix": {"type": "string"},
                    "include": include,
                    **_ARAZZO,
                    "max_preview_tokens": {"type": "integer", "minimum": 1},
                    "include_command_preview": {
                        "type": "boolean",
                        "default": False,
                        "description": "Add the command preview (about max_preview_tokens "
                        f"tokens, default {DEFAULT_PREVIEW_TOKENS}).",
                    },
                },
            ),
            preview,
            False,
        ),
        (
            "catalog.import_openapi",
            "standard",
            "Import a validated OpenAPI document (or GraphQL schema: its root fields become "
            "tools; or Arazzo document: the operations its steps use become tools and its "
            "workflows w_* workflows) as a catalog: writes its config and generated "
            "tools under the runtime directory, enabled by default; 'conflict' if the catalog "
            "exists unless overwrite=true. Give catalog (a name) or catalog_title. Show the "
            "user the warnings.",
            object_schema(
                {
                    **_COMMON,
                    "catalog": _NAME,
                    "catalog_title": _TITLE,
                    "vendor": _VENDOR,
                    "prefix": {"type": "string"},
                    "include": include,
                    "overwrite": {"type": "boolean", "default": False},
                    "enabled": {"type": "boolean", "default": True},
                    **_ARAZZO,
                },
            ),
            import_,
            True,
        ),
        (
            "catalog.set_enabled",
            "standard",
            "Enable or disable an imported catalog's tools without deleting anything. Name it "
            "by catalog (or catalog_id) or by catalog_title.",
            object_schema({**naming, "enabled": {"type": "boolean"}}, ["enabled"]),
            set_enabled,
            True,
        ),
        (
            "catalog.remove",
            "destructive",
            "Remove an imported catalog (and, with remove_manifest=true, its generated tools "
            "file). Only when the user explicitly asks for deletion. Name it by catalog (or "
            "catalog_id) or by catalog_title. The user is asked to confirm when the client "
            "can; otherwise the answer is a preview and a confirmation_token to call again "
            "with. dry_run=true only says what would be removed.",
            object_schema(
                {
                    **naming,
                    "remove_manifest": {"type": "boolean", "default": False},
                    "dry_run": DRY_RUN,
                    "confirmation_token": CONFIRMATION_TOKEN,
                },
            ),
            remove,
            True,
        ),
    ]
    for name, safety, description, schema, operation, changes in specs:
        tool = safety_tool(name, safety, description, schema)
        confirm = remove_preview if name == "catalog.remove" else None
        handler = operation_handler(operation, changes_tools=changes)
        view.add(ToolEntry(tool, "catalog", handler, preview=confirm))


def _titled(tool: str, a: dict[str, Any]) -> dict[str, Any]:
    """Preview/import arguments with ``catalog`` made from ``catalog_title`` when absent."""
    apply_aliases(tool, a, (), one_of=(("catalog", "catalog_title"),))
    if "catalog" in a:
        return a
    return {**a, "catalog": catalog_name_for(str(a["catalog_title"]))}


def _document(tool: str, a: dict[str, Any]) -> str | Upload:
    """``source``, or ``content`` with its ``filename`` and ``files``: exactly one of the two."""
    apply_aliases(tool, a, (), one_of=(("source", "content"),))
    if "source" in a and "content" in a:
        message = "give 'source' (a path or URL) or 'content' (the text), not both"
        raise InvalidInputError(
            message, violations=[{"path": "content", "rule": "one_of", "message": message}]
        )
    if "source" in a:
        extra = [k for k in ("filename", "files") if k in a]
        if extra:
            message = f"'{extra[0]}' goes with 'content', not with 'source'"
            raise InvalidInputError(
                message, violations=[{"path": extra[0], "rule": "with_content", "message": message}]
            )
        return str(a["source"])
    return Upload(str(a["content"]), a.get("filename"), dict(a.get("files") or {}))


def _disagree(alias: str, target: str, given: Any, other: Any) -> InvalidInputError:
    return InvalidInputError(
        f"'{alias}' and '{target}' disagree ({given!r} vs {other!r}); give one of them",
        violations=[
            {
                "path": alias,
                "rule": "alias",
                "message": f"disagrees with '{target}' (false means no preview)",
                "expected": f"true, or no '{target}'",
                "actual": given,
            }
        ],
    )


def _json(view: BaseModel) -> dict[str, Any]:
    """A service's view as the JSON an MCP tool answers."""
    return view.model_dump(mode="json")
