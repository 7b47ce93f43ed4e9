"""What the catalog service answers: typed views of catalogs and of what it did.

The REST routes answer these models as they are; MCP tools and the CLI dump them to JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dynamic_tools.violations import Problem


class Catalog(BaseModel):
    """One imported catalog: its config (source, prefix, filters...) and its tool counts."""

    model_config = ConfigDict(extra="allow")

    name: str
    title: str | None = None
    enabled: bool = True
    tool_count: int | None = Field(default=None, description="Tools its manifest holds")
    registered_tools: int | None = Field(default=None, description="Tools it registers now")
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
    (``tools/arazzo/validation.py``), its OpenAPI sources read to resolve its operations.
    """

    valid: bool
    document_kind: Literal["arazzo"]
    arazzo_version: str | None
    title: str | None
    workflows: list[str]
    sources: list[dict[str, Any]]
    warnings: list[Problem]
    violations: list[Problem]


class ImportPreview(BaseModel):
    """What an import would register, and what it would clash with; nothing is written."""

    model_config = ConfigDict(extra="allow")

    catalog: dict[str, Any]
    valid: bool
    projected_command_count: int
    projected_group_prefixes: list[Any]
    provider_contract_count: int
    provider_contracts: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    warnings: list[Problem]
    violations: list[Problem]


class Imported(BaseModel):
    """A catalog written and registered."""

    model_config = ConfigDict(extra="allow")

    catalog_id: str
    enabled: bool
    command_count: int
    provider_contract_count: int
    warnings: list[Problem]
    secrets: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The secrets the imported tools need, set or not (set them before calling)",
    )


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
