"""Building an outbound request in code, from a tool config and validated arguments.

The LLM never writes a URL: it only supplies argument values, and this module places them.
Path values are percent-encoded with no safe characters and dot segments are refused; header
values must be visible ASCII, space or tab (no line breaks, nothing HTTP — and httpx — cannot
carry; a value outside that is refused naming the header, before anything is sent); the final
URL is re-checked against the tool's base URL (same scheme, host, port, and path prefix).
Secrets are looked up here, by their tool secret name (``secret:NAME`` → ``NAME``), at build
time just before the send, and kept apart so :meth:`PreparedRequest.http_spec` can show them
as ``***`` — also a static body field holding a reference (``client_secret: secret:NAME``).

The body fields travel as the tool's ``api.content_type`` says: a JSON object, form pairs or
multipart parts (``http/form_bodies.py``), encoded here so that a file field's bad value is
refused, naming the field, before anything is sent.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from dynamic_tools.errors import ConfigurationError, InvalidInputError, TargetRefusedError
from dynamic_tools.http.form_bodies import (
    Part,
    form_pairs,
    multipart_parts,
    shown_part,
    wire_text,
)
from dynamic_tools.tools.credentials import environment_variable, secret_name
from dynamic_tools.tools.models import FORM, HEADER_NAME, HEADER_VALUE, JSON, MULTIPART, ToolConfig

MASK = "***"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

SecretLookup = Callable[[str], "str | None"]


@dataclass(frozen=True)
class PreparedRequest:
    """A request ready to send, with its secrets kept apart for masking."""

    tool: str
    method: str
    url: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    #: how ``body`` travels: ``application/json``, or form fields (``form``) or parts
    #: (``parts``), already encoded from it (``http/form_bodies.py``)
    content_type: str = JSON
    form: tuple[tuple[str, str], ...] = ()
    parts: tuple[Part, ...] = ()
    #: the top-level body fields that hold a secret (a static ``secret:NAME`` reference)
    secret_body: frozenset[str] = frozenset()
    secret_query: frozenset[str] = frozenset()
    #: the names (lower case) of the headers the tool's ``auth`` set: its credential, which
    #: no header a caller adds may replace (``http/outbound_headers.py``)
    secret_headers: frozenset[str] = frozenset()
    secret_values: tuple[str, ...] = ()
    graphql: bool = False  # a GraphQL call: its answer's ``errors`` make it fail
    #: the tool's own deadline for the whole call (``api.deadline_s``); None: the server's
    deadline_s: float | None = None
    #: the engine's ``Idempotency-Key`` for a workflow step (same on every retry), given by the
    #: caller that runs the step; sent apart from added headers, which may not set it
    idempotency_key: str | None = None

    def http_spec(self) -> dict[str, Any]:
        """The request as shown to users: secrets replaced by ``***``."""
        query: dict[str, Any] = {}
        for key, value in self.query:
            shown = MASK if key in self.secret_query else value
            if key in query:
                existing = query[key]
                query[key] = [*existing, shown] if isinstance(existing, list) else [existing, shown]
            else:
                query[key] = shown
        headers = {
            k: MASK if k.lower() in self.secret_headers else v for k, v in self.headers.items()
        }
        spec: dict[str, Any] = {"method": self.method, "url": self.url}
        if query:
            spec["query_params"] = query
        if headers:
            spec["headers"] = headers
        if self.body is not None:
            spec["content_type"] = self.content_type
            spec["body"] = self._shown_body()
        return spec

    def _shown_body(self) -> Any:
        """The body with its secret fields as ``***`` and its files as name, type and size."""
        if not isinstance(self.body, dict):
            return self.body
        files: dict[str, list[dict[str, Any]]] = {}
        for part in self.parts:
            if part.filename is not None:
                files.setdefault(part.name, []).append(shown_part(part))
        shown: dict[str, Any] = {}
        for key, value in self.body.items():
            if key in self.secret_body:
                shown[key] = MASK
            elif key in files:
                shown[key] = files[key] if isinstance(value, list) else files[key][0]
            else:
                shown[key] = value
        return shown


def build_request(
    tool: ToolConfig, arguments: dict[str, Any], *, secret: SecretLookup
) -> PreparedRequest:
    """Place validated ``arguments`` into a request for ``tool``.

    Raises:
        InvalidInputError: an argument cannot be placed safely (names the parameter).
        ConfigurationError: a referenced secret is not set (names the reference, not a value).
        TargetRefusedError: the built URL left the tool's base URL.
    """
    path = tool.api.path
    query: list[tuple[str, str]] = [(k, _scalar(v)) for k, v in tool.static_params.query.items()]
    headers: dict[str, str] = {k: v for k, v in tool.static_params.header.items()}
    body: dict[str, Any] = dict(tool.static_params.body)
    has_body = bool(body)
    cookies: list[str] = []
    secret_values: list[str] = []
    secret_body: set[str] = set()
    for key, reference in tool.static_params.secret_body.items():
        body[key] = _lookup(reference, secret, in_header=False)
        secret_values.append(body[key])
        secret_body.add(key)

    for name, param in tool.parameters.items():
        if name not in arguments or arguments[name] is None:
            continue
        value = arguments[name]
        if param.location == "path":
            path = path.replace("{" + name + "}", _path_segment(name, value))
        elif param.location == "query":
            values = value if isinstance(value, list) else [value]
            query.extend((name, _scalar(v)) for v in values)
        elif param.location == "header":
            headers[_header_name(name)] = _header_value(name, value)
        elif param.location == "cookie":
            cookies.append(f"{_cookie_name(name)}={_cookie_value(name, value)}")
        else:
            body[name] = value
            secret_body.discard(name)  # the caller's value replaced the static secret
            has_body = True

    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    secret_query: set[str] = set()
    secret_headers: set[str] = set()
    auth = tool.auth
    if auth.type != "none" and auth.secret:
        value = _lookup(auth.secret, secret, in_header=auth.location == "header")
        secret_values.append(value)
        if auth.type == "api_key" and auth.name:
            if auth.location == "query":
                query.append((auth.name, value))
                secret_query.add(auth.name)
            else:
                headers[auth.name] = value
                secret_headers.add(auth.name.lower())
        else:
            if auth.type == "bearer":
                header_value = f"Bearer {value}"
            else:
                token = base64.b64encode(f"{auth.username}:{value}".encode()).decode()
                header_value = f"Basic {token}"
            headers["Authorization"] = header_value
            secret_values.append(header_value)
            if auth.type == "basic":  # the credentials' encoding, as an API may echo it alone
                secret_values.append(token)
            secret_headers.add("authorization")

    if tool.graphql is not None:
        body, has_body = graphql_body(tool, arguments), True
    content_type = tool.api.content_type
    form: list[tuple[str, str]] = []
    parts: list[Part] = []
    if has_body and content_type == FORM:
        form = form_pairs(body)
    elif has_body and content_type == MULTIPART:
        parts = multipart_parts(body, tool.parameters)
    url = tool.api.base_url + path
    _check_inside(tool.api.base_url, url, tool.name)
    return PreparedRequest(
        tool=tool.name,
        method=tool.api.method,
        url=url,
        query=query,
        headers=headers,
        body=body if has_body else None,
        content_type=content_type,
        form=tuple(form),
        parts=tuple(parts),
        secret_body=frozenset(secret_body),
        secret_query=frozenset(secret_query),
        secret_headers=frozenset(secret_headers),
        secret_values=tuple(secret_values),
        graphql=tool.graphql is not None,
        deadline_s=tool.api.deadline_s,
    )


def graphql_body(tool: ToolConfig, arguments: dict[str, Any]) -> dict[str, Any]:
    """The body of a GraphQL call: ``{query, variables}``.

    A fixed operation takes the arguments as its variables; a given query is parsed and
    validated against the tool's schema first.

    Raises:
        InvalidInputError: the given query is not valid for the schema, or is a mutation the
            tool does not allow (names the argument, with GraphQL's line and column).
    """
    spec = tool.graphql
    assert spec is not None
    if spec.document is not None:
        variables = {k: v for k, v in arguments.items() if k in tool.parameters and v is not None}
        return {"query": spec.document, "variables": variables}
    assert spec.schema_sdl is not None
    from dynamic_tools.tools.graphql.operations import check_operation  # loads graphql-core
    from dynamic_tools.tools.graphql.schema import compiled_schema

    operation_name = arguments.get("operationName")
    check_operation(
        compiled_schema(spec.schema_sdl),
        arguments.get("query"),
        operation_name=operation_name if isinstance(operation_name, str) else None,
        allow_mutations=spec.allow_mutations,
    )
    body: dict[str, Any] = {
        "query": arguments["query"],
        "variables": arguments.get("variables") or {},
    }
    if isinstance(operation_name, str):
        body["operationName"] = operation_name
    return body


def _lookup(reference: str, secret: SecretLookup, *, in_header: bool) -> str:
    name = secret_name(reference)
    try:
        value = secret(name)
    except OSError as exc:  # a SECRETS_DIR file that cannot be read
        raise ConfigurationError(
            f"the secret '{reference}' could not be read ({type(exc).__name__})",
            context={"secret_ref": reference},
        ) from None
    if not value:
        raise ConfigurationError(
            f"the secret '{reference}' is not set; set the environment variable "
            f"{environment_variable(name)} (or the file {name} in SECRETS_DIR)",
            context={"secret_ref": reference},
        )
    if in_header and not HEADER_VALUE.match(value):
        raise ConfigurationError(
            f"the secret '{reference}' holds characters an HTTP header cannot carry (only "
            "visible ASCII); check its value",
            context={"secret_ref": reference},
        )
    return value


def _scalar(value: Any) -> str:
    return wire_text(value, ensure_ascii=True)


def _path_segment(name: str, value: Any) -> str:
    text = _scalar(value)
    decoded = text
    for _ in range(3):  # catch double-encoded dot segments such as %252e%252e
        decoded = unquote(decoded)
    segments = re.split(r"[/\\]", decoded)
    if any(s in (".", "..") for s in segments) or text.strip() == "":
        raise InvalidInputError(
            f"path parameter '{name}' must not be empty or a dot segment ('.', '..')",
            violations=[{"path": name, "message": "dot segment or empty path value"}],
        )
    if _CONTROL.search(decoded):
        raise InvalidInputError(
            f"path parameter '{name}' contains control characters",
            violations=[{"path": name, "message": "control characters are not allowed"}],
        )
    return quote(text, safe="")


_COOKIE_VALUE = re.compile(r"^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$")


def _cookie_name(name: str) -> str:
    if not HEADER_NAME.match(name):
        raise InvalidInputError(
            f"'{name}' is not a valid cookie name",
            violations=[{"path": name, "rule": "cookie_name", "message": "invalid cookie name"}],
        )
    return name


def _cookie_value(name: str, value: Any) -> str:
    text = _scalar(value)
    if not _COOKIE_VALUE.match(text):
        raise InvalidInputError(
            f"cookie parameter '{name}' holds characters a cookie cannot carry (spaces, quotes, "
            "commas, semicolons, backslashes or control characters)",
            violations=[{"path": name, "rule": "cookie_value", "message": "not a cookie value"}],
        )
    return text


def _header_name(name: str) -> str:
    if not HEADER_NAME.match(name):
        raise InvalidInputError(
            f"'{name}' is not a valid header name",
            violations=[{"path": name, "message": "invalid header name"}],
        )
    return name


def _header_value(name: str, value: Any) -> str:
    text = _scalar(value)
    if not HEADER_VALUE.match(text):
        reason = (
            "line breaks or control characters"
            if _CONTROL.search(text.replace("\t", ""))
            else "characters outside ASCII"
        )
        raise InvalidInputError(
            f"header parameter '{name}' contains {reason}; HTTP header values carry only "
            "visible ASCII, space and tab",
            violations=[
                {"path": name, "rule": "header_value", "message": f"{reason} are not allowed"}
            ],
        )
    return text


def _check_inside(base_url: str, url: str, tool: str) -> None:
    try:
        base, built = urlsplit(base_url), urlsplit(url)
        prefix = base.path.rstrip("/")
        same_origin = (base.scheme, base.hostname, base.port) == (
            built.scheme,
            built.hostname,
            built.port,
        )
    except ValueError as exc:  # an invalid port or IPv6 host: not a URL HTTP can use
        raise TargetRefusedError(
            f"the base URL of tool '{tool}' is not a URL HTTP can use ({exc})",
            context={"tool": tool},
        ) from None
    inside = built.path == prefix or built.path.startswith(prefix + "/") or not prefix
    if not same_origin or not inside or built.query or built.fragment:
        raise TargetRefusedError(
            f"the request built for tool '{tool}' leaves its base URL",
            context={"tool": tool, "base_url": base_url},
        )
