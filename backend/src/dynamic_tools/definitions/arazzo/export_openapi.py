"""Registered tools → the OpenAPI 3.1 description an Arazzo export names (``tools.openapi.yaml``).

One operation per tool (``operationId`` the tool's name), written so that importing it (as an
OpenAPI catalog, or as the source of the exported Arazzo document) gives tools that send the
same requests:

- parameters keep their ``in``; ``in: body`` ones are the properties of a JSON request body;
- ``servers``: the tools' base URL at the top when they all share one, else each operation's
  own;
- ``auth`` → ``components.securitySchemes`` and the operation's ``security``: ``bearer`` →
  ``http``/``bearer``, ``basic`` → ``http``/``basic``, ``api_key`` → ``apiKey`` with its ``in``
  and ``name``. Each scheme names its tool secret in ``x-dynamic-tools-secret`` (basic its user
  name in ``x-dynamic-tools-username``), which the OpenAPI importer reads back
  (``tools/openapi/security.py``): the same ``secret:NAME`` references, never a value;
- ``static_params`` (sent on every call) → required parameters (and body properties) whose
  schema is a ``const``; the exported Arazzo steps pass those values (:func:`static_values`).

What OpenAPI cannot say is a warning with its path (``tools.<name>....``): a basic auth user
name (only the extension keeps it), a ``${VAR}`` in a base URL, a static value that clashes
with a parameter, a static header OpenAPI ignores, a static body on a GET or DELETE, two tools
on the same method and path, a GraphQL tool's body, a call deadline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from dynamic_tools.tools.credentials import secret_name
from dynamic_tools.tools.models import AuthSpec, ToolConfig
from dynamic_tools.tools.openapi.security import SECRET_EXTENSION, USERNAME_EXTENSION

Warn = Callable[[str, str, str], None]
"""``warn(path, rule, message)``."""

_TEMPLATE_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")
"""``${VAR}`` in a base URL (as ``ToolConfig.template_variables`` reads it)."""
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
"""Header parameters OpenAPI says are ignored (the request's media types and its auth)."""


def openapi_of(
    tools: Iterable[ToolConfig],
    title: str,
    warn: Warn | None = None,
    source: Callable[[str], ToolConfig | None] | None = None,
) -> dict[str, Any]:
    """An OpenAPI 3.1 description of ``tools``; what it cannot say goes to ``warn``.

    ``source`` gives a tool as written in its file (``${VAR}`` not replaced), to name the
    variables its exported base URL had.
    """
    report: Warn = warn or (lambda path, rule, message: None)
    configs = list(tools)
    servers = {c.name: _server(c, report, source) for c in configs}
    shared = len({server["url"] for server in servers.values()}) == 1
    paths: dict[str, Any] = {}
    schemes = _Schemes(report)
    for config in configs:
        method = config.api.method.lower()
        taken = paths.get(config.api.path, {}).get(method)
        if taken is not None:
            report(
                f"tools.{config.name}",
                "operation_clash",
                f"tool '{taken['operationId']}' is {config.api.method} {config.api.path} too, "
                "and an OpenAPI description has one operation per method and path: this tool "
                "is left out, so the steps calling it cannot be imported",
            )
            continue
        operation: dict[str, Any] = {
            "operationId": config.name,
            "description": config.description,
            "responses": {"200": {"description": "the answer"}},
        }
        if config.hints.category:
            operation["tags"] = [config.hints.category]
        if not shared:
            operation["servers"] = [servers[config.name]]
        parameters = _parameters(config, report)
        if parameters:
            operation["parameters"] = parameters
        body = _request_body(config, report)
        if body:
            operation["requestBody"] = body
        if config.auth.type != "none":
            operation["security"] = [{schemes.name_of(config): []}]
        if config.output_schema:
            operation["responses"]["200"]["content"] = {
                "application/json": {"schema": config.output_schema}
            }
        _unsaid(config, report)
        paths.setdefault(config.api.path, {})[method] = operation
    document: dict[str, Any] = {"openapi": "3.1.0", "info": {"title": title, "version": "1.0.0"}}
    if shared and configs:
        document["servers"] = [servers[configs[0].name]]
    document["paths"] = paths
    if schemes.schemes:
        document["components"] = {"securitySchemes": schemes.schemes}
    return document


def _unsaid(config: ToolConfig, warn: Warn) -> None:
    """Warn about what of the tool the operation does not say (how it calls, not what)."""
    if config.graphql is not None:
        warn(
            f"tools.{config.name}.graphql",
            "graphql_call",
            "a GraphQL tool sends {query, variables}; the operation lists its variables as "
            "body properties, so an import of it sends them otherwise",
        )
    if config.api.deadline_s is not None:
        warn(
            f"tools.{config.name}.api.deadline_s",
            "deadline",
            f"OpenAPI has no call deadline: the tool's {config.api.deadline_s:g} s is not "
            "exported (an import uses the server's TOOL_CALL_DEADLINE_S)",
        )


def static_values(config: ToolConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The step parameters and payload properties that send ``config``'s static params.

    Only those :func:`openapi_of` wrote as parameters (not the ones named like a parameter).
    """
    parameters = [
        {"name": name, "in": location, "value": value}
        for location, name, value in _static_parameters(config)
        if _static_kept(config, name)
    ]
    secrets = config.static_params.secret_body
    payload = (
        {k: v for k, v in config.static_params.body.items() if k not in secrets}
        if _static_body_kept(config)
        else {}
    )
    return parameters, payload


# --- servers ---------------------------------------------------------------------------------
def _server(
    config: ToolConfig, warn: Warn, source: Callable[[str], ToolConfig | None] | None
) -> dict[str, Any]:
    """The tool's base URL as a Server Object; ``${VAR}`` becomes a server variable."""
    url = config.api.base_url
    where = f"tools.{config.name}.api.base_url"
    names = config.template_variables()
    if names:
        warn(
            where,
            "base_url_variable",
            f"the base URL '{url}' has no value for "
            + ", ".join(f"${{{n}}}" for n in names)
            + ": written as server variables without a value; give the import a base_url",
        )
        return {
            "url": _TEMPLATE_VAR.sub(lambda m: "{" + m.group(1) + "}", url),
            "variables": {n: {"default": "", "description": f"${{{n}}}"} for n in names},
        }
    written = source(config.name) if source is not None else None
    if written is not None and written.template_variables():
        warn(
            where,
            "base_url_variable",
            f"the tool's base URL is '{written.api.base_url}' in its file; the export has its "
            f"value here, '{url}'",
        )
    return {"url": url}


# --- parameters and body ---------------------------------------------------------------------
def _parameters(config: ToolConfig, warn: Warn) -> list[dict[str, Any]]:
    """Static query and header values first (the order they are sent in), then the tool's."""
    out: list[dict[str, Any]] = []
    for location, name, value in _static_parameters(config):
        where = f"tools.{config.name}.static_params.{location}.{name}"
        if not _static_kept(config, name):
            warn(
                where,
                "static_param_clash",
                f"the static {location} value '{name}' has the name of a parameter of the tool: "
                "it is not exported, the exported operation does not send it",
            )
            continue
        if location == "header" and name.lower() in _IGNORED_HEADERS:
            warn(
                where,
                "static_param_ignored",
                f"OpenAPI says a header parameter named {name} is ignored: importers other "
                "than Dynamic Tools may not send it",
            )
        out.append(
            {
                "name": name,
                "in": location,
                "required": True,
                "description": "Sent with every call (a static parameter of the tool).",
                "schema": _const(value),
            }
        )
    for name, param in config.parameters.items():
        if param.location == "body":
            continue
        out.append(
            {
                "name": name,
                "in": param.location,
                "required": param.location == "path" or param.required,
                "schema": param.schema_,
            }
        )
    return out


def _request_body(config: ToolConfig, warn: Warn) -> dict[str, Any] | None:
    """The JSON body: static properties (``const``) first, then the ``in: body`` parameters."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    static = config.static_params.body
    if static and not _static_body_kept(config):
        where = f"tools.{config.name}.static_params.body"
        if config.api.method in ("GET", "DELETE"):
            reason = f"a {config.api.method} operation has no request body in OpenAPI"
        else:
            reason = "a static body field has the name of a body parameter of the tool"
        warn(where, "static_body_dropped", f"{reason}: the static body is not exported")
    elif static:
        secrets = config.static_params.secret_body
        properties.update({name: _const(value) for name, value in static.items()})
        required += [name for name in static if name not in secrets]
        for name, reference in secrets.items():  # by reference only: the tool sends it
            properties[name] = {"type": "string", SECRET_EXTENSION: secret_name(reference)}
    body = {n: p for n, p in config.parameters.items() if p.location == "body"}
    properties.update({n: p.schema_ for n, p in body.items()})
    required += [n for n, p in body.items() if p.required]
    if not properties:
        return None
    return {
        "required": bool(required),
        "content": {
            config.api.content_type: {
                "schema": {"type": "object", "properties": properties, "required": required}
            }
        },
    }


def _static_parameters(config: ToolConfig) -> list[tuple[str, str, Any]]:
    static = config.static_params
    return [("query", n, v) for n, v in static.query.items()] + [
        ("header", n, v) for n, v in static.header.items()
    ]


def _static_kept(config: ToolConfig, name: str) -> bool:
    """Whether a static query or header value can be a parameter (no parameter has its name)."""
    return name not in config.parameters


def _static_body_kept(config: ToolConfig) -> bool:
    static = config.static_params.body
    return (
        bool(static)
        and config.api.method not in ("GET", "DELETE")
        and not set(static) & set(config.parameters)
    )


def _const(value: Any) -> dict[str, Any]:
    """A schema only ``value`` fits (its JSON type, ``const``, and ``default`` for tools)."""
    schema: dict[str, Any] = {}
    for kind, types in (
        ("boolean", bool),
        ("integer", int),
        ("number", float),
        ("string", str),
        ("array", list),
        ("object", dict),
    ):
        if isinstance(value, types):
            schema["type"] = kind
            break
    return {**schema, "const": value, "default": value}


# --- security --------------------------------------------------------------------------------
class _Schemes:
    """One security scheme per distinct auth of the tools, named from its secret."""

    def __init__(self, warn: Warn) -> None:
        self.warn = warn
        self.schemes: dict[str, dict[str, Any]] = {}
        self._names: dict[str, str] = {}  # the auth, as JSON → its scheme's name

    def name_of(self, config: ToolConfig) -> str:
        auth = config.auth
        key = auth.model_dump_json(by_alias=True)
        if key in self._names:
            return self._names[key]
        scheme = _scheme(auth)
        if auth.type == "basic":
            self.warn(
                f"tools.{config.name}.auth.username",
                "basic_auth_username",
                "OpenAPI has no place for a basic auth user name: it is kept in "
                f"{USERNAME_EXTENSION}, which only Dynamic Tools reads",
            )
        stem = f"{auth.type}_{auth.secret_name}"
        name, number = stem, 1
        while name in self.schemes:
            number += 1
            name = f"{stem}_{number}"
        self.schemes[name] = scheme
        self._names[key] = name
        return name


def _scheme(auth: AuthSpec) -> dict[str, Any]:
    if auth.type == "api_key":
        scheme: dict[str, Any] = {"type": "apiKey", "in": auth.location, "name": auth.name}
    else:
        scheme = {"type": "http", "scheme": auth.type}
    scheme[SECRET_EXTENSION] = auth.secret_name
    if auth.type == "basic":
        scheme[USERNAME_EXTENSION] = auth.username
    return scheme


__all__ = ["Warn", "openapi_of", "static_values"]
