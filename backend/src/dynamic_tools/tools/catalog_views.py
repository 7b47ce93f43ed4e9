"""What the catalog service answers: typed views of catalogs and of what it did.

The REST routes answer these models as they are; MCP tools and the CLI dump them to JSON.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from dynamic_tools.sparse import Sparse
from dynamic_tools.violations import Problem


class Catalog(Sparse):
    """One imported catalog: its config (source, prefix, filters...) and its tool counts.

    The config's fields appear as its file has them (an Arazzo catalog has ``arazzo_version``,
    ``workflows`` and ``workflow_file``; an OpenAPI one ``openapi_version``).
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {
            "source",
            "source_type",
            "kind",
            "openapi_version",
            "arazzo_version",
            "vendor",
            "prefix",
            "base_url",
            "include",
            "document_hash",
            "manifest",
            "workflow_file",
            "workflows",
            "created_at",
            "updated_at",
        }
    )

    name: str
    title: str | None = None
    enabled: bool = True
    tool_count: int | None = Field(default=None, description="Tools its manifest holds")
    registered_tools: int | None = Field(default=None, description="Tools it registers now")
    source: str | None = Field(default=None, description="Where the document was read")
    source_type: str | None = Field(default=None, description="url or path")
    kind: str | None = Field(default=None, description="openapi, swagger, graphql or arazzo")
    openapi_version: str | None = None
    arazzo_version: str | None = None
    vendor: str | None = None
    prefix: str | None = Field(default=None, description="Its tools' name prefix")
    base_url: str | None = Field(default=None, description="The base URL used instead")
    include: list[str] | None = Field(default=None, description="Only these operations")
    document_hash: str | None = None
    manifest: str | None = Field(default=None, description="Its tool manifest's file name")
    workflow_file: str | None = Field(default=None, description="An Arazzo catalog's workflows")
    workflows: list[str] | None = None
    created_at: str | None = None
    updated_at: str | None = None
    secrets: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The secrets its tools need: each reference, whether it is set now (never "
        "its value) and where to set it",
    )


class OpenApiCheck(BaseModel):
    """What a document is and whether it converts; nothing is written."""

    valid: bool
    document_kind: str
    openapi_version: str | None
    title: str | None
    operation_count: int
    tool_count: int
    warnings: list[Problem]
    violations: list[Problem]


class ArazzoReport(BaseModel):
    """What an Arazzo document is and what is wrong with it; nothing is written.

    Checked against the OAI JSON Schema of Arazzo 1.0 and the rules it cannot express
    (``definitions/arazzo/validation.py``), its OpenAPI sources read to resolve its operations.
    """

    valid: bool
    document_kind: Literal["arazzo"]
    arazzo_version: str | None
    title: str | None
    workflows: list[str]
    sources: list[dict[str, Any]]
    warnings: list[Problem]
    violations: list[Problem]


class ImportPreview(Sparse):
    """What an import would register, and what it would clash with; nothing is written.

    ``command_preview`` with a token budget; ``workflows`` and ``workflow_document`` for an
    Arazzo document.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"command_preview", "command_preview_truncated", "workflows", "workflow_document"}
    )

    catalog: dict[str, Any]
    valid: bool
    projected_command_count: int
    projected_group_prefixes: list[Any]
    provider_contract_count: int
    provider_contracts: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    warnings: list[Problem]
    violations: list[Problem]
    command_preview: list[dict[str, Any]] | None = Field(
        default=None, description="The commands, within max_preview_tokens"
    )
    command_preview_truncated: bool | None = None
    workflows: list[str] | None = Field(default=None, description="Arazzo: the workflow ids")
    workflow_document: str | None = Field(
        default=None, description="Arazzo: the workflow document that would be saved"
    )


class Imported(Sparse):
    """A catalog written and registered (an Arazzo import: its workflows too)."""

    SPARSE: ClassVar[frozenset[str]] = frozenset({"workflows", "workflow_file"})

    catalog_id: str
    catalog_path: str
    manifest_path: str
    enabled: bool
    command_count: int
    provider_contract_count: int
    warnings: list[Problem]
    secrets: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The secrets the imported tools need, set or not (set them before calling)",
    )
    workflows: list[str] | None = Field(default=None, description="Arazzo: the workflow ids")
    workflow_file: str | None = Field(default=None, description="Arazzo: the workflow file")


class Toggled(BaseModel):
    """A catalog turned on or off."""

    catalog_id: str
    enabled: bool
    command_count_after_toggle: int


class Removed(BaseModel):
    """A catalog removed."""

    removed_catalog_id: str
    manifest_removed: bool
    remaining_catalog_count: int


__all__ = [
    "ArazzoReport",
    "Catalog",
    "ImportPreview",
    "Imported",
    "OpenApiCheck",
    "Removed",
    "Toggled",
]
