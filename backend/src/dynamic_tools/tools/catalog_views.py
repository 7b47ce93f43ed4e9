"""What the catalog service answers: typed views of catalogs and of what it did.

The REST routes answer these models as they are; MCP tools and the CLI dump them to JSON.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import Sparse
from dynamic_tools.tools.auth_status import SecretStatus
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
    secrets: list[SecretStatus] = Field(
        default_factory=list,
        description="The secrets its tools need: each reference, whether it is set now (never "
        "its value) and where to set it",
    )


class OpenApiCheck(LazyModel):
    """What a document is and whether it converts; nothing is written."""

    valid: bool
    document_kind: str
    openapi_version: str | None
    title: str | None
    operation_count: int
    tool_count: int
    warnings: list[Problem]
    violations: list[Problem]


class ArazzoSource(LazyModel):
    """A source description of an Arazzo document, as the document gives it.

    Strings in a valid document; an invalid one's values are shown as they are.
    """

    name: Any
    url: Any
    type: Any = Field(description="openapi (when not given) or arazzo")


class ArazzoReport(LazyModel):
    """What an Arazzo document is and what is wrong with it; nothing is written.

    Checked against the OAI JSON Schema of Arazzo 1.0 and the rules it cannot express
    (``definitions/arazzo/validation.py``), its OpenAPI sources read to resolve its operations.
    """

    valid: bool
    document_kind: Literal["arazzo"]
    arazzo_version: str | None
    title: str | None
    workflows: list[str]
    sources: list[ArazzoSource]
    warnings: list[Problem]
    violations: list[Problem]


class PreviewCatalog(Sparse):
    """The catalog an import would write, as the preview shows it."""

    SPARSE: ClassVar[frozenset[str]] = frozenset({"openapi_version", "arazzo_version"})

    name: str
    title: str | None
    vendor: str | None
    kind: str = Field(description="openapi, swagger, graphql or arazzo")
    openapi_version: str | None = None
    arazzo_version: str | None = None
    base_url: str | None
    prefix: str | None


class GroupPrefix(LazyModel):
    """A command group (a tool's category, prefixed) and how many tools it has."""

    group: str
    count: int


class ProviderParameter(LazyModel):
    """A parameter calling a provider needs, with its JSON Schema."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    name: str
    schema_: dict[str, Any] = Field(alias="schema", description="Its JSON Schema")


class ProviderContractView(LazyModel):
    """A tool whose results feed another tool's parameter (``ProviderContract``)."""

    provider: str
    output_field: str
    items_at: str = Field(description="The property holding the items ('': the result is)")
    feeds: list[str] = Field(description="Each fed parameter as tool.param")
    required_parameters: list[ProviderParameter]


class Conflict(Sparse):
    """A name the import would define that is taken: what it clashes with, how to proceed.

    A tool or an Arazzo workflow another catalog or file defines (``tool`` / ``workflow``),
    or the catalog itself when it exists (``catalog``: ``overwrite`` replaces it).
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset({"tool", "workflow", "catalog"})

    tool: str | None = None
    workflow: str | None = None
    catalog: str | None = None
    name: str = Field(description="The name that clashes")
    kind: Literal["tool", "workflow", "catalog"] = Field(description="What the name is")
    existing: str = Field(description="Where it is defined now, in words")
    existing_kind: Literal["catalog", "tool_file", "workflow_file"] = Field(
        description="What defines it now: a catalog, a tool file or a workflow file"
    )
    existing_name: str = Field(
        description="That catalog's name, or the file (tools/..., workflows/...)"
    )
    overwrite_resolves: bool = Field(
        description="True when importing with overwrite settles it (the catalog exists); "
        "else a tool prefix, another name or a change to the other definition does"
    )
    how: str = Field(description="How to proceed, in words")


class CommandPreview(LazyModel):
    """One tool an import would register, in short."""

    name: str
    method: str
    path: str
    summary: str
    parameters: list[str] = Field(description="Its parameters, the optional ones ending in '?'")


class ArazzoWorkflowReport(LazyModel):
    """One workflow of an Arazzo document: imported as ``id``, or left out and why."""

    workflow_id: str = Field(description="Its id in the Arazzo document")
    id: str | None = Field(description="Its id here (None: left out)")
    imported: bool
    problems: list[Problem] = Field(
        description="Why it is left out (not chosen, cannot be converted, runs one left out)"
    )


class ImportPreview(Sparse):
    """What an import would register, and what it would clash with; nothing is written.

    ``command_preview`` with a token budget; ``workflows`` and ``workflow_document`` for an
    Arazzo document.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {
            "command_preview",
            "command_preview_truncated",
            "workflows",
            "workflow_document",
            "arazzo_workflows",
            "lenient_accepts",
        }
    )

    catalog: PreviewCatalog
    valid: bool
    projected_command_count: int
    projected_group_prefixes: list[GroupPrefix]
    provider_contract_count: int
    provider_contracts: list[ProviderContractView]
    conflicts: list[Conflict]
    warnings: list[Problem]
    violations: list[Problem]
    lenient_accepts: int | None = Field(
        default=None,
        description="Arazzo, not lenient: how many of the violations are shortcuts lenient "
        "mode would read (each then a warning)",
    )
    command_preview: list[CommandPreview] | None = Field(
        default=None, description="The commands, within max_preview_tokens"
    )
    command_preview_truncated: bool | None = None
    workflows: list[str] | None = Field(default=None, description="Arazzo: the workflow ids")
    workflow_document: str | None = Field(
        default=None, description="Arazzo: the workflow document that would be saved"
    )
    arazzo_workflows: list[ArazzoWorkflowReport] | None = Field(
        default=None,
        description="Arazzo: each workflow of the document, imported or left out with why",
    )


class Imported(Sparse):
    """A catalog written and registered (an Arazzo import: its workflows too)."""

    SPARSE: ClassVar[frozenset[str]] = frozenset({"workflows", "workflow_file", "left_out"})

    catalog_id: str
    catalog_path: str
    manifest_path: str
    enabled: bool
    command_count: int
    provider_contract_count: int
    warnings: list[Problem]
    secrets: list[SecretStatus] = Field(
        default_factory=list,
        description="The secrets the imported tools need, set or not (set them before calling)",
    )
    workflows: list[str] | None = Field(default=None, description="Arazzo: the workflow ids")
    workflow_file: str | None = Field(default=None, description="Arazzo: the workflow file")
    left_out: list[ArazzoWorkflowReport] | None = Field(
        default=None, description="Arazzo: the workflows not imported, with why"
    )


class Toggled(LazyModel):
    """A catalog turned on or off."""

    catalog_id: str
    enabled: bool
    command_count_after_toggle: int


class Removed(LazyModel):
    """A catalog removed."""

    removed_catalog_id: str
    manifest_removed: bool
    remaining_catalog_count: int


__all__ = [
    "ArazzoReport",
    "ArazzoSource",
    "ArazzoWorkflowReport",
    "Catalog",
    "CommandPreview",
    "Conflict",
    "GroupPrefix",
    "ImportPreview",
    "Imported",
    "OpenApiCheck",
    "PreviewCatalog",
    "ProviderContractView",
    "ProviderParameter",
    "Removed",
    "Toggled",
]
