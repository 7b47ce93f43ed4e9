"""Per-session configuration from request headers (docs/design-sources.md, orchestration plan).

A client configures what it sees with headers sent on every request::

    X-Target-URL          rest: an OpenAPI 2.0/3.x document (JSON or YAML) whose operations
                          become this session's API tools; graphql: the GraphQL endpoint
                          (schema by introspection, or from X-Schema-URL)
    X-API-Type            rest (default) or graphql
    X-Schema-URL          graphql: the schema as an SDL document, when introspection is off
    X-API-Name            the prefix of {prefix}_query / {prefix}_execute
    X-Allow-Unsafe-Paths  glob patterns (JSON array or comma-separated) of paths, operation
                          ids or mutation fields that model-composed calls ({prefix}_query,
                          {prefix}_execute, recipes, runs of drafts) may use although they
                          change things; without it they are read-only (tools/safety.py)
    X-Target-Headers      JSON object of headers added to the calls of the session's own API
                          (X-Target-URL; auth); never echoed, never sent to a registry tool
    X-Tool-Hints          JSON object tool → {category, requires, outputs, next, hint}
    X-Workflow-URL        a workflow document whose workflows become this session's w_* tools
    X-Workflow-Resources  a markdown guide served as workflow://{domain}/overview

Without these headers the server-side registry and workflows are served. URLs are fetched
only from allowed hosts, or ``file://`` inside the registry directory.

``X-Target-Headers`` needs ``X-Target-URL``: the headers are for the session's own API, and a
session without one calls the registry's tools, which use the server's credentials. Names that
change where or how a request travels or who it claims to come from (``Host``,
``Transfer-Encoding``, ``X-Forwarded-For``, ``Idempotency-Key``...:
``http/outbound_headers.py``) are refused, each named with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.http.outbound_headers import refused_reason
from dynamic_tools.tools.models import HEADER_VALUE

HEADER_NAMES = (
    "x-target-url",
    "x-api-type",
    "x-schema-url",
    "x-allow-unsafe-paths",
    "x-api-name",
    "x-target-headers",
    "x-tool-hints",
    "x-workflow-url",
    "x-workflow-resources",
)
_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,30}$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
MAX_HEADER_CHARS = 64_000


@dataclass(frozen=True)
class SessionConfig:
    """What one MCP session asked for through headers (all optional)."""

    target_url: str | None = None
    api_type: str = "rest"
    schema_url: str | None = None
    allow_unsafe: tuple[str, ...] = ()
    api_name: str | None = None
    target_headers: dict[str, str] = field(default_factory=dict, compare=False)
    tool_hints_raw: str | None = None
    workflow_url: str | None = None
    workflow_resources_url: str | None = None
    fingerprint: str = ""
    #: whose learned recipes the session offers and learns (``admin``: a one-person setup's)
    recipe_owner: str = "admin"

    def for_principal(self, principal_id: str) -> SessionConfig:
        """The same configuration for ``principal_id``'s session: its own recipes (and view)."""
        if principal_id == self.recipe_owner:
            return self
        return replace(
            self, recipe_owner=principal_id, fingerprint=f"{self.fingerprint}|{principal_id}"
        )

    @property
    def brings_documents(self) -> bool:
        """Whether the session names documents by URL (fetched again after a while)."""
        return any(
            (self.target_url, self.schema_url, self.workflow_url, self.workflow_resources_url)
        )

    @property
    def uses_registry(self) -> bool:
        """Whether the server-side registry supplies the API tools (no X-Target-URL)."""
        return self.target_url is None

    @property
    def api_headers(self) -> dict[str, str]:
        """The headers for calls of the session's own API; none when the registry is its API.

        A registry tool calls its API with the server's credentials, never the session's.
        """
        return {} if self.target_url is None else dict(self.target_headers)


def _violation(header: str, message: str) -> dict[str, Any]:
    return {"path": f"header:{header}", "rule": "header", "message": message}


def parse_session_headers(headers: Mapping[str, str] | None) -> SessionConfig:
    """Read the session headers; every problem is named with its header.

    Raises:
        InvalidInputError: a header is malformed (violations name each header).
    """
    if not headers:
        return SessionConfig()
    values = {name: headers.get(name) for name in HEADER_NAMES}
    present = {k: v.strip() for k, v in values.items() if v is not None and v.strip()}
    if not present:
        return SessionConfig()
    violations: list[dict[str, Any]] = []
    for name, value in present.items():
        if len(value) > MAX_HEADER_CHARS:
            violations.append(_violation(name, f"longer than {MAX_HEADER_CHARS} characters"))
    api_type = present.get("x-api-type", "rest").lower()
    if api_type not in ("rest", "graphql"):
        violations.append(
            _violation("x-api-type", f"'{api_type}' is not supported; use 'rest' or 'graphql'")
        )
    if api_type == "graphql" and "x-target-url" not in present:
        violations.append(_violation("x-target-url", "graphql needs the endpoint's URL"))
    if "x-schema-url" in present and api_type != "graphql":
        violations.append(_violation("x-schema-url", "only a graphql API takes a schema URL"))
    allow_unsafe = _parse_patterns(present.get("x-allow-unsafe-paths"), violations)
    api_name = present.get("x-api-name")
    if api_name is not None and not _PREFIX.match(api_name):
        violations.append(
            _violation(
                "x-api-name",
                "must start with a letter and hold at most 31 letters, digits, '_' or '-'",
            )
        )
    target_headers = _parse_target_headers(present.get("x-target-headers"), violations)
    if "x-target-headers" in present and "x-target-url" not in present:
        violations.append(
            _violation(
                "x-target-headers",
                "X-Target-Headers needs X-Target-URL: the headers go only to the session's own "
                "API, and without X-Target-URL this session has none (the registry's tools "
                "call their APIs with the server's credentials, never a session's)",
            )
        )
    for name in ("x-target-url", "x-schema-url", "x-workflow-url", "x-workflow-resources"):
        url = present.get(name)
        if url is not None and not re.match(r"^(https?|file)://", url):
            violations.append(_violation(name, "must be an http(s):// or file:// URL"))
    if violations:
        raise InvalidInputError(
            "the session headers are invalid: " + "; ".join(v["message"] for v in violations),
            violations=violations,
        )
    digest = hashlib.sha256(
        json.dumps({k: present.get(k) for k in HEADER_NAMES}, sort_keys=True).encode()
    ).hexdigest()
    return SessionConfig(
        target_url=present.get("x-target-url"),
        api_type=api_type,
        schema_url=present.get("x-schema-url"),
        allow_unsafe=allow_unsafe,
        api_name=api_name,
        target_headers=target_headers,
        tool_hints_raw=present.get("x-tool-hints"),
        workflow_url=present.get("x-workflow-url"),
        workflow_resources_url=present.get("x-workflow-resources"),
        fingerprint=digest,
    )


def _parse_target_headers(raw: str | None, violations: list[dict[str, Any]]) -> dict[str, str]:
    """``X-Target-Headers``: a JSON object of header name → string value (values never echoed)."""
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        violations.append(_violation("x-target-headers", f"not valid JSON (column {exc.colno})"))
        return {}
    except RecursionError:  # nested past the decoder's limit; a flat object is expected
        violations.append(_violation("x-target-headers", "nested too deeply"))
        return {}
    if not isinstance(data, dict):
        violations.append(_violation("x-target-headers", "must be a JSON object"))
        return {}
    headers: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(key, str) or not _HEADER_NAME.match(key):
            violations.append(_violation("x-target-headers", f"'{key}' is not a header name"))
        elif (reason := refused_reason(key)) is not None:
            violations.append(
                _violation(
                    f"x-target-headers.{key}",
                    f"X-Target-Headers may not set '{key}': {reason}",
                )
            )
        elif not isinstance(value, str) or not HEADER_VALUE.match(value):
            violations.append(
                _violation(
                    "x-target-headers",
                    f"the value of '{key}' must be a one-line string of visible ASCII "
                    "(what HTTP headers carry)",
                )
            )
        else:
            headers[key] = value
    return headers


def _parse_patterns(raw: str | None, violations: list[dict[str, Any]]) -> tuple[str, ...]:
    """``X-Allow-Unsafe-Paths``: a JSON array of glob patterns, or patterns separated by commas."""
    if raw is None:
        return ()
    if raw.startswith("["):
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            violations.append(_violation("x-allow-unsafe-paths", "not a valid JSON array"))
            return ()
        if not isinstance(data, list) or not all(isinstance(p, str) for p in data):
            violations.append(_violation("x-allow-unsafe-paths", "must be an array of strings"))
            return ()
        patterns = [p.strip() for p in data]
    else:
        patterns = [p.strip() for p in raw.split(",")]
    if not all(patterns) or len(patterns) > 100:
        violations.append(
            _violation("x-allow-unsafe-paths", "give 1 to 100 non-empty glob patterns")
        )
        return ()
    return tuple(patterns)
