"""``/catalogs``: validate, preview and import OpenAPI documents; enable, disable, remove.

The document is given by ``source`` (a path or URL) or inline: ``content`` (its text) with
``files`` (the files it names by relative path, e.g. an Arazzo document's OpenAPI sources).

Bodies are validated by FastAPI (422 naming the field); the catalog service raises the
project's errors (422 with violations, 404, 409), mapped in ``api/errors.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import ConfigDict, Field, StringConstraints, WithJsonSchema

from dynamic_tools.api.catalog_models import (
    ArazzoReport,
    Catalog,
    CatalogList,
    Imported,
    ImportPreview,
    OpenApiCheck,
    Removed,
    Toggled,
)
from dynamic_tools.api.deps import ServicesDep, note_audit_target
from dynamic_tools.api.params import JSON_INTEGER
from dynamic_tools.api.responses import BODY, PARAMS, errors
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.tools.catalog_uploads import MAX_UPLOAD_FILES, Upload
from dynamic_tools.tools.catalogs import CatalogService
from dynamic_tools.tools.openapi.catalog_files import CATALOG_NAME, CATALOG_PREFIX

router = APIRouter(prefix="/catalogs", tags=["Catalogs"])


# The name and prefix patterns are declared here and checked by the catalog service, not on
# reading the body: so a name that is not one is reported together with a source that cannot
# be read (the source's problem first), rather than hiding it.
def _name() -> Any:
    return Field(
        json_schema_extra={"pattern": CATALOG_NAME.pattern},
        description="Catalog name: 1-64 letters, digits, '-' or '_', starting with a letter or "
        "digit.",
    )


def _prefix() -> Any:
    return Field(
        default=None,
        json_schema_extra={"pattern": CATALOG_PREFIX.pattern},
        description="Tool name prefix: 1-32 letters, digits, '-' or '_', starting with a letter "
        "or digit.",
    )


async def get_catalogs(services: ServicesDep) -> CatalogService:
    """The server's catalog service (shared with the MCP catalog.* tools)."""
    return services.catalogs


CatalogsDep = Annotated[CatalogService, Depends(get_catalogs)]

MAX_UPLOAD_CHARS = 16 * 1024 * 1024
"""The longest uploaded text (the request itself is capped by MAX_REQUEST_BYTES first)."""
FileName = Annotated[
    str, StringConstraints(min_length=1, max_length=255, pattern=r"^[^\x00-\x1f\x7f\\]+$")
]
FileText = Annotated[str, StringConstraints(max_length=MAX_UPLOAD_CHARS, pattern=r"^[^\x00]*$")]
_FILE_NAME_SCHEMA = {"minLength": 1, "maxLength": 255, "pattern": r"^[^\x00-\x1f\x7f\\]+$"}
# Every key a file name, every value a text (pydantic would say so with patternProperties,
# which leave other keys open).
FileMap = Annotated[
    dict[FileName, FileText],
    WithJsonSchema(
        {
            "type": "object",
            "maxProperties": MAX_UPLOAD_FILES,
            "propertyNames": _FILE_NAME_SCHEMA,
            "additionalProperties": {
                "type": "string",
                "maxLength": MAX_UPLOAD_CHARS,
                "pattern": r"^[^\x00]*$",
            },
        }
    ),
]


class SourceBody(LazyModel):
    """Where the document is: ``source``, or inline as ``content`` (and its ``files``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    source: str | None = Field(
        default=None,
        min_length=1,
        description="A path inside the registry root (relative paths start there), a "
        "file:// URL, or an http(s) URL on an allowed host. Give this or content.",
        examples=["https://petstore3.swagger.io/api/v3/openapi.json"],
    )
    content: FileText | None = Field(
        default=None,
        min_length=1,
        description="The document's text (uploaded or pasted) instead of a source.",
    )
    filename: FileName | None = Field(
        default=None,
        description="With content: the document's file name (default 'document'); a "
        "relative path, no '..'.",
        examples=["shop.arazzo.yaml"],
    )
    files: FileMap | None = Field(
        default=None,
        max_length=MAX_UPLOAD_FILES,
        description="With content: the other files it names, by path relative to it "
        "(an Arazzo document's OpenAPI sources, e.g. './openapi.yaml') → their text. Kept "
        "with the catalog once imported.",
    )
    source_type: Literal["url", "path"] | None = Field(
        default=None, description="Inferred from the source when omitted."
    )
    base_url: str | None = Field(
        default=None, description="Use this API base URL instead of the document's servers."
    )


class ArazzoOptions(LazyModel):
    """How an Arazzo document is imported (ignored for other documents)."""

    lenient: bool = Field(
        default=False,
        description="Arazzo: also read the shortcuts some runners accept ($steps.x.name "
        "without .outputs, dotted bodies, source#/paths operation paths, loosely matched "
        "parameter names, literal outputs), each reported as a warning.",
    )
    base_urls: dict[str, str] | None = Field(
        default=None,
        description="Arazzo: a base URL per source description name, instead of its servers.",
    )
    sources: dict[str, str] | None = Field(
        default=None,
        description="Arazzo: read a source description from this path or URL instead (by "
        "name), e.g. a local copy of a remote OpenAPI description.",
    )
    workflows: list[str] | None = Field(
        default=None,
        description="Arazzo: import only these workflows (by their Arazzo ids); by default "
        "every one that can be converted, the others reported as left out with why.",
    )


class PreviewBody(SourceBody, ArazzoOptions):
    """A dry run of an import."""

    name: str = _name()
    prefix: str | None = _prefix()
    include: list[str] | None = Field(
        default=None, description="Only these operations (operationId, tool name or 'GET /path')."
    )
    max_preview_tokens: Annotated[int, Field(ge=1, le=200_000), JSON_INTEGER] | None = Field(
        default=None, description="Add a command list of about this size."
    )


class ImportBody(SourceBody, ArazzoOptions):
    """An import."""

    name: str = _name()
    prefix: str | None = _prefix()
    include: list[str] | None = Field(default=None, description="Only these operations.")
    overwrite: bool = Field(default=False, description="Replace an existing catalog.")
    enabled: bool = Field(default=True, description="Register its tools at once.")


def _document(body: SourceBody) -> str | Upload:
    """The source, or the upload; exactly one (422 naming the field otherwise)."""
    if (body.source is None) == (body.content is None):
        given = "both" if body.source is not None else "neither"
        message = f"give exactly one of 'source' (a path or URL) and 'content' (the text): {given}"
        field = "content" if body.source is not None else "source"
        raise InvalidInputError(
            message, violations=[{"path": field, "rule": "one_of", "message": message}]
        )
    if body.source is not None:
        for field in ("filename", "files"):
            if getattr(body, field) is not None:
                message = f"'{field}' goes with 'content', not with 'source'"
                raise InvalidInputError(
                    message,
                    violations=[{"path": field, "rule": "with_content", "message": message}],
                )
        return body.source
    assert body.content is not None
    return Upload(body.content, body.filename, dict(body.files or {}))


class EnabledBody(LazyModel):
    """Turn a catalog on or off."""

    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool


@router.get("", summary="List catalogs", response_model=CatalogList)
async def list_catalogs(catalogs: CatalogsDep) -> CatalogList:
    """Every imported catalog with its config and number of registered tools."""
    return CatalogList(catalogs=catalogs.list())


@router.get(
    "/{name}", summary="Get a catalog", responses=errors(PARAMS, 404), response_model=Catalog
)
async def get_catalog(name: str, catalogs: CatalogsDep) -> Catalog:
    """One catalog's config."""
    return catalogs.get(name)


@router.post(
    "/validate",
    summary="Validate an OpenAPI, GraphQL or Arazzo document",
    responses=errors(BODY),
    response_model=OpenApiCheck | ArazzoReport,
)
async def validate_openapi(body: SourceBody, catalogs: CatalogsDep) -> OpenApiCheck | ArazzoReport:
    """Kind, operation count, warnings and violations; nothing is written.

    An Arazzo document is checked against the OAI JSON Schema of Arazzo 1.0 and the rules it
    cannot express (unique ids, steps, inputs, components, workflows and operations that
    exist; its OpenAPI sources are read next to it), each problem with its path and line.
    """
    return await catalogs.validate_openapi(
        _document(body), source_type=body.source_type, base_url=body.base_url
    )


@router.post(
    "/preview", summary="Preview an import", responses=errors(BODY), response_model=ImportPreview
)
async def preview_import(body: PreviewBody, catalogs: CatalogsDep) -> ImportPreview:
    """Projected commands, groups, provider contracts and conflicts; nothing is written.

    For an Arazzo document also ``workflows`` and ``workflow_document`` (what would be saved).
    """
    return await catalogs.preview_import(
        _document(body),
        body.name,
        prefix=body.prefix,
        include=body.include,
        base_url=body.base_url,
        max_preview_tokens=body.max_preview_tokens,
        source_type=body.source_type,
        lenient=body.lenient,
        base_urls=body.base_urls,
        sources=body.sources,
        workflows=body.workflows,
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Import an OpenAPI document, a GraphQL schema or an Arazzo document",
    responses=errors(BODY, 409),
    response_model=Imported,
)
async def import_openapi(request: Request, body: ImportBody, catalogs: CatalogsDep) -> Imported:
    """Write the catalog and its tools, then reload the registry; 409 if it exists.

    A GraphQL schema (SDL, or an introspection answer as JSON) becomes one tool per root field;
    ``base_url`` is then the endpoint's URL (required: a schema holds no address).
    An Arazzo document imports the operations its steps use as tools and its workflows as a
    workflow document (``<name>.arazzo.yaml``, each workflow also a ``w_*`` MCP tool).
    """
    note_audit_target(request, f"name={body.name}")
    return await catalogs.import_openapi(
        _document(body),
        body.name,
        prefix=body.prefix,
        overwrite=body.overwrite,
        enabled=body.enabled,
        include=body.include,
        base_url=body.base_url,
        source_type=body.source_type,
        lenient=body.lenient,
        base_urls=body.base_urls,
        sources=body.sources,
        workflows=body.workflows,
    )


@router.patch(
    "/{name}/enabled",
    summary="Enable or disable a catalog",
    responses=errors(BODY, 404),
    response_model=Toggled,
)
@router.post(
    "/{name}/enabled",
    summary="Enable or disable a catalog (the PATCH, for clients that lack it)",
    responses=errors(BODY, 404),
    deprecated=True,
    response_model=Toggled,
)
async def set_enabled(name: str, body: EnabledBody, catalogs: CatalogsDep) -> Toggled:
    """Register or unregister the catalog's tools; its files stay."""
    return await catalogs.set_enabled(name, body.enabled)


@router.delete(
    "/{name}", summary="Remove a catalog", responses=errors(PARAMS, 404), response_model=Removed
)
async def remove_catalog(
    name: str,
    catalogs: CatalogsDep,
    remove_manifest: bool = Query(default=True, description="Also delete the tool manifest"),
) -> Removed:
    """Delete the catalog's config (and its manifest); its tools are unregistered."""
    return await catalogs.remove(name, remove_manifest=remove_manifest)
