"""ToolConfig: how one HTTP operation is described so an LLM (and the engine) can call it.

The format (the README's "Tool configs"): each parameter is a JSON Schema plus ``in`` (where it
goes on the wire) and ``required``; ``api.content_type`` says how the body fields travel (JSON,
a form or multipart parts); ``static_params`` are sent on every call; ``auth`` — and a top-level
static body field — refers to a tool secret by reference (``secret:NAME``, see
``tools/credentials.py``), never by value, and no literal credential is accepted anywhere else
(static params, URL user info); ``annotations`` default from the method.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final, Literal, cast
from urllib.parse import urlsplit

import httpx
from jsonschema.exceptions import SchemaError
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    StrictBool,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.literal_credentials import HOW_TO_STORE, token_shape
from dynamic_tools.tools.credentials import secret_name
from dynamic_tools.tools.file_fields import accepted_schema
from dynamic_tools.tools.schema_check import check_schema
from dynamic_tools.tools.static_credentials import (
    RUN_VALUES,
    body_secret_references,
    static_params_errors,
)

TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
JSON: Final = "application/json"
FORM: Final = "application/x-www-form-urlencoded"
MULTIPART: Final = "multipart/form-data"
BodyContentType = Literal[
    "application/json", "application/x-www-form-urlencoded", "multipart/form-data"
]
ParameterLocation = Literal["path", "query", "header", "cookie", "body"]
# Header values HTTP (and httpx) can carry: visible ASCII, space and tab.
HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^\s%/?#@\[\]:]+)$")
_PLACEHOLDER = re.compile(r"\{([^{}/]+)\}")
_TEMPLATE_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


@lru_cache(maxsize=1024)
def check_url_authority(url: str) -> None:
    """Raise ValueError unless ``url``'s host and port can be used.

    No user info (credentials are never part of a tool), a valid host, a port in 1..65535.
    Remembered for URLs that pass (a catalog's tools share a few base URLs; an error is not
    cached, it is raised again).
    """
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"is not a URL HTTP can use ({exc})") from None
    if "@" in parts.netloc:
        raise ValueError(
            "must not carry credentials (user info before '@'); use auth with a secret reference"
        )
    try:
        port = parts.port
        hostname = parts.hostname
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as exc:
        raise ValueError(f"is not a URL HTTP can use ({exc})") from None
    host = parts.netloc.rsplit(":", 1)[0] if port is not None else parts.netloc
    if not hostname or not _HOST.match(host):
        raise ValueError(f"has no valid host ('{host}')")
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"has port {port}, outside 1..65535")


def _no_token(text: str) -> None:
    """Refuse ``text`` (a URL, a user name) when it holds a known token shape.

    Raised as a located error whose input is masked: a ValueError's error would repeat the
    value in its text.
    """
    shape = token_shape(text)
    if shape is not None:
        raise ValidationError.from_exception_data(
            "literal_credential",
            [
                InitErrorDetails(
                    type=PydanticCustomError(
                        "literal_credential",
                        f"holds what looks like {shape}, and a literal credential is never "
                        f"stored in a tool: {HOW_TO_STORE}",
                    ),
                    loc=(),
                    input="***",
                )
            ],
        )


def _refuse_content_type(message: str) -> None:
    """Raise a validation error located at ``api.content_type``."""
    raise ValidationError.from_exception_data(
        "ToolConfig",
        [
            InitErrorDetails(
                type=PydanticCustomError("content_type", message),
                loc=("api", "content_type"),
                input=None,
            )
        ],
    )


_INPUT_SCHEMA_KEY = "_input_schema_built"
"""Where :meth:`ToolConfig.input_schema` keeps what it built, in the model's ``__dict__``."""


class _Strict(LazyModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ApiSpec(_Strict):
    """Where the operation lives: method, base URL and path template (``/flights/{id}``)."""

    method: HttpMethod
    base_url: str = Field(min_length=1)
    path: str = "/"
    #: seconds the whole call may take (connect, headers, body); default TOOL_CALL_DEADLINE_S.
    #: A node's lower ``timeout`` still wins.
    deadline_s: float | None = Field(default=None, gt=0, le=3600)
    #: how the ``in: body`` parameters are sent: a JSON object (the default), form fields
    #: (``application/x-www-form-urlencoded``) or parts (``multipart/form-data``);
    #: see ``http/form_bodies.py``
    content_type: BodyContentType = JSON

    @model_serializer(mode="wrap")
    def _without_unset_deadline(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("deadline_s") is None:
            data.pop("deadline_s", None)  # most tools have none: their files stay as they were
        if isinstance(data, dict) and data.get("content_type") == JSON:
            data.pop("content_type", None)  # the default: JSON tools' files stay as they were
        return data

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
        check_url_authority(probe)
        _no_token(value)
        return value.rstrip("/")

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with '/'")
        if "?" in value or "#" in value:
            raise ValueError("must not contain a query or fragment; use static_params")
        _no_token(value)
        return value

    @property
    def path_placeholders(self) -> list[str]:
        """Names of ``{placeholders}`` in the path template, in order."""
        return _PLACEHOLDER.findall(self.path)


class Parameter(LazyModel):
    """One parameter: a JSON Schema plus ``in`` and ``required``.

    Every JSON Schema keyword is kept as given (``schema_`` holds them); only ``in`` and
    ``required`` are ours.
    """

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    location: ParameterLocation = Field(default="query", alias="in")
    required: StrictBool = False  # true/false only: 0, 1 or "yes" are refused

    @property
    def schema_(self) -> dict[str, Any]:
        """The parameter's JSON Schema (every key except ``in`` and ``required``): a copy."""
        return dict(self.model_extra or {})

    @property
    def held(self) -> dict[str, Any]:
        """The parameter's JSON Schema as held (not a copy): read it, never change it."""
        extra = self.__pydantic_extra__
        return extra if extra is not None else {}

    @model_validator(mode="after")
    def _check_schema(self) -> Parameter:
        try:
            check_schema(self.schema_)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return self


class StaticParams(_Strict):
    """Values sent with every call, by location. They are never shown to the LLM as inputs.

    No literal credential (README, "Tool configs"): header and query names that look
    like credentials (``Authorization``, ``X-API-Key``, ``*token*``, ``*secret*``,
    ``*password*``, ``api_key``...), credential-named body fields and values of a known token
    shape are refused, each naming its field: a credential goes in ``auth``, as a secret
    reference. Header names must be HTTP tokens and values visible ASCII.

    A top-level body field may hold a tool secret reference (``client_secret: secret:NAME``):
    its value is looked up when the request is built and masked wherever the request is shown
    (:attr:`secret_body`). The static params of a ``rest_call`` (a run's values, validated with
    the ``RUN_VALUES`` context) hold no reference: a run's ``secret:X`` text is sent as it is.
    """

    query: dict[str, str | int | float | bool] = Field(default_factory=dict)
    header: dict[str, str] = Field(default_factory=dict)
    body: dict[str, Any] = Field(default_factory=dict)
    _secret_body: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def secret_body(self) -> dict[str, str]:
        """The body fields whose value is a tool secret reference: field → ``secret:NAME``."""
        return self._secret_body

    @field_validator("header")
    @classmethod
    def _check_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not HEADER_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid header name")
            if not HEADER_VALUE.match(text):
                raise ValueError(
                    f"the value of header '{name}' has characters HTTP headers cannot carry "
                    "(only visible ASCII, space and tab; no line breaks)"
                )
        return value

    @model_validator(mode="after")
    def _no_literal_credentials(self, info: ValidationInfo) -> StaticParams:
        run_values = bool(info.context and info.context.get(RUN_VALUES))
        problems = static_params_errors(self.query, self.header, self.body, run_values=run_values)
        if problems:
            raise ValidationError.from_exception_data("StaticParams", problems)
        if not run_values:
            self._secret_body = body_secret_references(self.body)
        return self


class AuthSpec(_Strict):
    """How to authenticate. ``secret`` (and ``username`` for basic) are references, never values."""

    type: Literal["none", "api_key", "bearer", "basic"] = "none"
    location: Literal["header", "query"] = Field(default="header", alias="in")
    name: str | None = Field(default=None, description="Header or query name for api_key.")
    secret: str | None = Field(
        default=None, description="Tool secret reference, e.g. secret:WEATHER_KEY."
    )
    username: str | None = Field(default=None, description="For basic auth: a plain user name.")

    @field_validator("secret")
    @classmethod
    def _check_ref(cls, value: str | None) -> str | None:
        if value is not None:
            secret_name(value)  # ValueError: a literal, or a variable outside tool secrets
        return value

    @field_validator("username")
    @classmethod
    def _plain_username(cls, value: str | None) -> str | None:
        if value is not None:
            _no_token(value)
        return value

    @property
    def secret_name(self) -> str | None:
        """The tool secret ``secret`` names (``secret:X`` or ``env:DT_SECRET_X`` → ``X``)."""
        return secret_name(self.secret) if self.secret else None

    @model_validator(mode="after")
    def _complete(self) -> AuthSpec:
        if self.type != "none" and not self.secret:
            raise ValueError(f"auth type '{self.type}' needs 'secret' (e.g. secret:NAME)")
        if self.type == "api_key" and not self.name:
            raise ValueError("auth type 'api_key' needs 'name' (the header or query name)")
        if self.type == "basic" and not self.username:
            raise ValueError("auth type 'basic' needs 'username'")
        return self


class ToolHints(_Strict):
    """Ordering hints (docs/design-sources.md): category, requires, outputs, next, free text."""

    category: str | None = None
    requires: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    next: list[str] = Field(default_factory=list)
    hint: str | None = None
    examples: list[str] = Field(default_factory=list)  # requests the tool answers


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


class GraphQLCall(_Strict):
    """A GraphQL operation: ``POST {query, variables}`` to the tool's URL (``api``).

    With ``document`` the operation is fixed (a root field of the schema) and the tool's
    parameters are its variables. Without it the tool takes ``query`` (the operation's text)
    and ``variables`` as arguments; ``schema_sdl`` is the schema the query is parsed and
    validated against before anything is sent, and a mutation is refused unless each of its
    root fields matches one of ``allow_mutations`` (glob patterns; ``*`` allows every one).
    """

    document: str | None = Field(default=None, min_length=1)
    schema_sdl: str | None = Field(default=None, min_length=1)
    allow_mutations: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> GraphQLCall:
        if (self.document is None) == (self.schema_sdl is None):
            raise ValueError("give either document (a fixed operation) or schema_sdl")
        return self


# A tool that gives no static params, auth, hints or annotations shares these empty ones (frozen
# models, never changed in place): at 1,000 tools, about 3 MiB less (docs/performance.md).
_NO_STATIC_PARAMS: Final = StaticParams()
_NO_AUTH: Final = AuthSpec()
_NO_HINTS: Final = ToolHints()
_NO_ANNOTATIONS: Final = ToolAnnotations()


class ToolConfig(_Strict):
    """One registered tool: an HTTP operation with its parameters, auth and hints."""

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(min_length=1)
    api: ApiSpec
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    static_params: StaticParams = Field(default_factory=lambda: _NO_STATIC_PARAMS)
    auth: AuthSpec = Field(default_factory=lambda: _NO_AUTH)
    output_schema: dict[str, Any] | None = None
    hints: ToolHints = Field(default_factory=lambda: _NO_HINTS)
    annotations: ToolAnnotations = Field(default_factory=lambda: _NO_ANNOTATIONS)
    graphql: GraphQLCall | None = None

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
        if self.api.content_type != JSON and self.api.method in ("GET", "DELETE"):
            _refuse_content_type(
                f"'{self.api.content_type}' needs a body, and {self.api.method} operations send "
                "none (use POST, PUT or PATCH)"
            )
        if self.graphql is not None:
            if self.api.content_type != JSON:
                _refuse_content_type(
                    f"'{self.api.content_type}' cannot carry a GraphQL operation, which is sent "
                    "as JSON"
                )
            if self.api.method != "POST":
                raise ValueError("a GraphQL operation is sent with POST")
            if any(p.location != "body" for p in self.parameters.values()):
                raise ValueError("the parameters of a GraphQL operation are 'in: body'")
            if self.graphql.schema_sdl is not None and set(self.parameters) - {
                "query",
                "variables",
                "operationName",
            }:
                raise ValueError("a free GraphQL query takes query, variables and operationName")
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
        """The JSON Schema of the tool's arguments (an object; no extra properties).

        A file field of a multipart tool takes a string or a file object
        (``tools/file_fields.py``).

        Built on first use and then shared: every caller (the registry's schemas, the MCP tool,
        the argument validators) gets the same dict, whose properties are the parameters' own
        schemas, so a tool's schema is held once (docs/performance.md, "Memory: idle and at
        1,000 tools"). Read it; never change it.
        """
        cached = self.__dict__.get(_INPUT_SCHEMA_KEY)
        content_type = self.api.content_type
        if cached is not None and cached[0] is self.parameters and cached[1] == content_type:
            return cast(dict[str, Any], cached[2])
        multipart = content_type == MULTIPART
        properties = {
            name: accepted_schema(p.schema_) if multipart and p.location == "body" else p.held
            for name, p in self.parameters.items()
        }
        required = [name for name, p in self.parameters.items() if p.required]
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        # Kept beside the fields, not as one: pydantic's dumps, repr and equality ignore it. A
        # copy with other parameters or another content type builds its own (checked above).
        self.__dict__[_INPUT_SCHEMA_KEY] = (self.parameters, content_type, schema)
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
