"""ToolConfig: how one HTTP operation is described so an LLM (and the engine) can call it.

The format (DESIGN.md, "Tool config"): each parameter is a JSON Schema plus ``in`` (where it
goes on the wire) and ``required``; ``static_params`` are sent on every call; ``auth`` refers to
a secret by reference (``env:NAME``), never by value; ``annotations`` default from the method.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from dynamic_tools.tools.schema_check import check_schema

TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
ParameterLocation = Literal["path", "query", "header", "body"]
SECRET_REF_PATTERN = re.compile(r"^env:[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER = re.compile(r"\{([^{}/]+)\}")
_TEMPLATE_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ApiSpec(_Strict):
    """Where the operation lives: method, base URL and path template (``/flights/{id}``)."""

    method: HttpMethod
    base_url: str = Field(min_length=1)
    path: str = "/"

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str) -> str:
        probe = _TEMPLATE_VAR.sub("http://template", value)
        if not re.match(r"^https?://[^/?#\s]+", probe):
            raise ValueError("must be an absolute http(s) URL, optionally starting with ${VAR}")
        if "?" in value or "#" in value:
            raise ValueError("must not contain a query or fragment; use static_params")
        return value.rstrip("/")

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with '/'")
        if "?" in value or "#" in value:
            raise ValueError("must not contain a query or fragment; use static_params")
        return value

    @property
    def path_placeholders(self) -> list[str]:
        """Names of ``{placeholders}`` in the path template, in order."""
        return _PLACEHOLDER.findall(self.path)


class Parameter(BaseModel):
    """One parameter: a JSON Schema plus ``in`` and ``required``.

    Every JSON Schema keyword is kept as given (``schema_`` holds them); only ``in`` and
    ``required`` are ours.
    """

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    location: ParameterLocation = Field(default="query", alias="in")
    required: StrictBool = False  # true/false only: 0, 1 or "yes" are refused

    @property
    def schema_(self) -> dict[str, Any]:
        """The parameter's JSON Schema (every key except ``in`` and ``required``)."""
        return dict(self.model_extra or {})

    @model_validator(mode="after")
    def _check_schema(self) -> Parameter:
        try:
            check_schema(self.schema_)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return self


class StaticParams(_Strict):
    """Values sent with every call, by location. They are never shown to the LLM as inputs."""

    query: dict[str, str | int | float | bool] = Field(default_factory=dict)
    header: dict[str, str] = Field(default_factory=dict)
    body: dict[str, Any] = Field(default_factory=dict)


class AuthSpec(_Strict):
    """How to authenticate. ``secret`` (and ``username`` for basic) are references, never values."""

    type: Literal["none", "api_key", "bearer", "basic"] = "none"
    location: Literal["header", "query"] = Field(default="header", alias="in")
    name: str | None = Field(default=None, description="Header or query name for api_key.")
    secret: str | None = Field(default=None, description="Secret reference, e.g. env:API_KEY.")
    username: str | None = Field(default=None, description="For basic auth: a plain user name.")

    @field_validator("secret")
    @classmethod
    def _check_ref(cls, value: str | None) -> str | None:
        if value is not None and not SECRET_REF_PATTERN.match(value):
            raise ValueError("must be a secret reference like 'env:NAME', never the secret itself")
        return value

    @model_validator(mode="after")
    def _complete(self) -> AuthSpec:
        if self.type != "none" and not self.secret:
            raise ValueError(f"auth type '{self.type}' needs 'secret' (e.g. env:NAME)")
        if self.type == "api_key" and not self.name:
            raise ValueError("auth type 'api_key' needs 'name' (the header or query name)")
        if self.type == "basic" and not self.username:
            raise ValueError("auth type 'basic' needs 'username'")
        return self


class ToolHints(_Strict):
    """Ordering hints (seed 000): category, requires, outputs, next, free text."""

    category: str | None = None
    requires: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    next: list[str] = Field(default_factory=list)
    hint: str | None = None
    examples: list[str] = Field(default_factory=list)  # requests the tool answers (seed 000)


class ToolAnnotations(_Strict):
    """MCP-style behaviour hints. Unset fields are derived from the HTTP method."""

    read_only: StrictBool | None = None
    destructive: StrictBool | None = None
    idempotent: StrictBool | None = None
    open_world: StrictBool | None = None


_METHOD_DEFAULTS: dict[str, tuple[bool, bool, bool]] = {
    #          read_only, destructive, idempotent
    "GET": (True, False, True),
    "POST": (False, False, False),
    "PUT": (False, True, True),
    "PATCH": (False, True, False),
    "DELETE": (False, True, True),
}


class ToolConfig(_Strict):
    """One registered tool: an HTTP operation with its parameters, auth and hints."""

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(min_length=1)
    api: ApiSpec
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    static_params: StaticParams = Field(default_factory=StaticParams)
    auth: AuthSpec = Field(default_factory=AuthSpec)
    output_schema: dict[str, Any] | None = None
    hints: ToolHints = Field(default_factory=ToolHints)
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)

    @field_validator("output_schema")
    @classmethod
    def _check_output_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            try:
                check_schema(value)
            except SchemaError as exc:
                raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return value

    @model_validator(mode="after")
    def _check_consistency(self) -> ToolConfig:
        placeholders = self.api.path_placeholders
        for name in placeholders:
            param = self.parameters.get(name)
            if param is None:
                raise ValueError(f"api.path has '{{{name}}}' but no parameter '{name}' exists")
            if param.location != "path":
                raise ValueError(f"parameter '{name}' fills api.path, so it needs 'in: path'")
        for name, param in self.parameters.items():
            if param.location == "path" and name not in placeholders:
                raise ValueError(
                    f"parameter '{name}' is 'in: path' but api.path has no '{{{name}}}'"
                )
            if param.location == "path" and not param.required:
                raise ValueError(f"path parameter '{name}' must be required")
        if self.api.method in ("GET", "DELETE") and any(
            p.location == "body" for p in self.parameters.values()
        ):
            raise ValueError(f"{self.api.method} operations cannot have 'in: body' parameters")
        return self

    # --- derived views ---------------------------------------------------------------------
    @property
    def effective_annotations(self) -> ToolAnnotations:
        """Annotations with unset fields derived from the method."""
        read_only, destructive, idempotent = _METHOD_DEFAULTS[self.api.method]
        a = self.annotations
        return ToolAnnotations(
            read_only=read_only if a.read_only is None else a.read_only,
            destructive=destructive if a.destructive is None else a.destructive,
            idempotent=idempotent if a.idempotent is None else a.idempotent,
            open_world=True if a.open_world is None else a.open_world,
        )

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (an object; no extra properties)."""
        properties = {name: p.schema_ for name, p in self.parameters.items()}
        required = [name for name, p in self.parameters.items() if p.required]
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        return schema

    def template_variables(self) -> list[str]:
        """``${VAR}`` names used in ``api.base_url``."""
        return _TEMPLATE_VAR.findall(self.api.base_url)

    def with_variables(self, variables: dict[str, str]) -> ToolConfig:
        """A copy with ``${VAR}`` in ``api.base_url`` replaced; unknown names raise KeyError."""
        if not self.template_variables():
            return self
        base_url = _TEMPLATE_VAR.sub(lambda m: variables[m.group(1)], self.api.base_url)
        return self.model_copy(update={"api": self.api.model_copy(update={"base_url": base_url})})
