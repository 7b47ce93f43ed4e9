"""Response models of the tool routes (``/tools``)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import Sparse
from dynamic_tools.tools.auth_status import SecretStatus
from dynamic_tools.tools.models import ParameterLocation, ToolAnnotations


class ToolProblem(LazyModel):
    """A tool file (or a tool in it) that did not load."""

    file: str
    tool: str | None = None
    field: str
    reason: str


class ToolParameter(Sparse):
    """One parameter of a tool: its JSON Schema plus ``in`` and ``required``.

    The keywords a form reads are declared; the schema's other keywords (``minimum``,
    ``pattern``, ``items``...) follow as the tool file gives them: a JSON Schema is open.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"type", "description", "format", "enum", "default", "example"}
    )

    location: ParameterLocation = Field(alias="in", description="Where it goes on the wire")
    required: bool
    type: str | list[str] | None = Field(default=None, description="Its JSON Schema type")
    description: str | None = None
    format: str | None = None
    enum: list[Any] | None = None
    default: Any = None
    example: Any = None


class ToolHintsView(Sparse):
    """A tool's hints for planners, those that are set."""

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"category", "requires", "outputs", "next", "hint", "examples"}
    )

    category: str | None = None
    requires: list[str] | None = Field(default=None, description="Tools to call first")
    outputs: list[str] | None = Field(default=None, description="What its answer gives")
    next: list[str] | None = Field(default=None, description="Tools to call after it")
    hint: str | None = None
    examples: list[str] | None = Field(default=None, description="Requests it answers")


class ToolAuth(Sparse):
    """How a tool authenticates; for a secret, whether it is set now (never the value)."""

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"in", "name", "username", "secret", "set", "set_with", "body_secrets"}
    )

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    type: Literal["none", "api_key", "bearer", "basic"]
    location: Literal["header", "query"] | None = Field(default=None, alias="in")
    name: str | None = Field(default=None, description="The header or query name (api_key)")
    username: str | None = Field(default=None, description="basic: the user name")
    secret: str | None = Field(default=None, description="The secret reference")
    set: bool | None = Field(default=None, description="Whether the secret is set now")
    set_with: str | None = Field(default=None, description="Where to set it")
    body_secrets: dict[str, SecretStatus] | None = Field(
        default=None,
        description="Body fields the tool sends a secret in (static_params.body "
        "'secret:NAME'): field → whether that secret is set now",
    )


class ToolSummary(LazyModel):
    """A tool in a list: what it calls and how its parameters are placed."""

    name: str
    description: str
    method: str
    endpoint: str = Field(description="Base URL and path")
    parameters: dict[str, ToolParameter] = Field(
        description="Per parameter: its JSON Schema plus `in` and `required`"
    )
    hints: ToolHintsView
    annotations: ToolAnnotations = Field(description="read_only, destructive, idempotent...")
    auth: ToolAuth = Field(
        description="How it authenticates: type (none, api_key, bearer, basic), in, name, the "
        "secret reference, whether it is set now (never its value) and where to set it"
    )


class ToolList(LazyModel):
    """Every tool, and the problems of tool files that did not load."""

    tools: list[ToolSummary]
    problems: list[ToolProblem]


class ToolView(Sparse):
    """A tool in its file form, plus the resolved endpoint and schemas.

    The file form's fields (``ToolConfig``) appear when they are not their defaults, as the
    file has them (the routes answer it with ``response_model_exclude_unset``).
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"parameters", "static_params", "auth", "output_schema", "hints", "annotations", "graphql"}
    )

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
    effective_annotations: ToolAnnotations
    auth_status: ToolAuth = Field(
        description="How it authenticates and whether its secret is set now (never the value)"
    )


class ToolConfigSchema(LazyModel):
    """The JSON Schema (draft 2020-12) of a tool config: what POST and PUT /tools accept."""

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["object"]
    title: str
    description: str
    additional_properties: bool = Field(alias="additionalProperties")
    properties: dict[str, Any]
    required: list[str] = Field(default_factory=list)
    defs: dict[str, Any] = Field(default_factory=dict, alias="$defs")


class ToolsReloaded(LazyModel):
    """The tool names after a reload, and the problems of files that did not load."""

    tools: list[str]
    problems: list[ToolProblem]
