"""Response models of the tool routes (``/tools``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolProblem(BaseModel):
    """A tool file (or a tool in it) that did not load."""

    file: str
    tool: str | None = None
    field: str
    reason: str


class ToolSummary(BaseModel):
    """A tool in a list: what it calls and how its parameters are placed."""

    name: str
    description: str
    method: str
    endpoint: str = Field(description="Base URL and path")
    parameters: dict[str, dict[str, Any]] = Field(
        description="Per parameter: its JSON Schema plus `in` and `required`"
    )
    hints: dict[str, Any]
    annotations: dict[str, Any] = Field(description="read_only, destructive, idempotent...")
    auth: dict[str, Any] = Field(
        description="How it authenticates: type (none, api_key, bearer, basic), in, name, the "
        "secret reference, whether it is set now (never its value) and where to set it"
    )


class ToolList(BaseModel):
    """Every tool, and the problems of tool files that did not load."""

    tools: list[ToolSummary]
    problems: list[ToolProblem]


class ToolView(BaseModel):
    """A tool in its file form, plus the resolved endpoint and schemas.

    The file form's fields (``ToolConfig``) appear when they are not their defaults, as the
    file has them (the routes answer it with ``response_model_exclude_unset``).
    """

    name: str
    description: str
    api: dict[str, Any] = Field(description="method, base_url, path, timeout...")
    parameters: dict[str, dict[str, Any]] | None = None
    static_params: dict[str, Any] | None = None
    auth: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    hints: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    graphql: dict[str, Any] | None = None
    endpoint: str = Field(description="Method, base URL and path, variables resolved")
    input_schema: dict[str, Any] = Field(description="The JSON Schema its arguments must match")
    effective_annotations: dict[str, Any]
    auth_status: dict[str, Any] = Field(
        description="How it authenticates and whether its secret is set now (never the value)"
    )


class ToolConfigSchema(BaseModel):
    """The JSON Schema (draft 2020-12) of a tool config: what POST and PUT /tools accept."""

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["object"]
    title: str
    description: str
    additional_properties: bool = Field(alias="additionalProperties")
    properties: dict[str, Any]
    required: list[str] = Field(default_factory=list)
    defs: dict[str, Any] = Field(default_factory=dict, alias="$defs")


class ToolsReloaded(BaseModel):
    """The tool names after a reload, and the problems of files that did not load."""

    tools: list[str]
    problems: list[ToolProblem]
