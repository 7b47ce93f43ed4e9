"""Refusing literal credentials in a tool's static params, each refusal naming its field.

A tool sends a credential only through ``auth``, as a tool secret reference (``secret:NAME``).
What ``static_params`` may not hold (README, "Tool configs"):

- a header or query parameter whose *name* looks like a credential (``Authorization``,
  ``X-API-Key``, ``api_key``, ``*token*``...);
- a header or query *value* of a known token shape (``Bearer eyJ…`` under any header name,
  ``sk-…``, ``AKIA…``, ``Basic <base64>``), :func:`~dynamic_tools.literal_credentials.token_shape`;
- anywhere in the body, however nested: a credential-named field with a literal value
  (``auth.password``) or a value of a known token shape.

A top-level body field may instead hold a tool secret *reference*, ``secret:NAME``
(:func:`body_secret_references`): the request builder sends the secret's value in its place
(an OAuth token request's ``client_secret``), masked wherever the request is shown. A reference
deeper in the body is refused: it would be sent as the text ``secret:NAME``.

Each refusal is one pydantic error located at the field (``static_params.body.auth.password``,
``static_params.header.X-Custom``) whose message says to store the value as a tool secret and
reference it as ``secret:NAME``. Its ``input`` is never the value (a validation error's text
must not carry the credential it refuses).

A ``rest_call`` builds a one-off tool from a run's values (``$references`` already rendered):
with the :data:`RUN_VALUES` validation context only the names of headers are checked — its
literal values were checked when its workflow document was validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import InitErrorDetails, PydanticCustomError

from dynamic_tools.literal_credentials import (
    HOW_TO_STORE,
    MAX_DEPTH,
    Finding,
    find_literal_credentials,
    looks_like_credential,
    looks_like_credential_field,
    token_shape,
)
from dynamic_tools.tools.credentials import secret_name

__all__ = ["RUN_VALUES", "body_secret_references", "static_params_errors"]

RUN_VALUES = "run_values"
"""Validation context key: the static params are a run's values (a ``rest_call``), not literals."""

_NEVER_STORED = "a literal credential is never stored in a tool"

SECRET_PREFIX = "secret:"
"""A static body value starting with this is a tool secret reference (``secret:NAME``)."""


def body_secret_references(body: Mapping[str, Any]) -> dict[str, str]:
    """The top-level body fields whose value is a ``secret:NAME`` reference: field → reference."""
    return {name: value for name, value in body.items() if _is_reference(value)}


def _is_reference(value: Any) -> bool:
    """Whether a static body value is a tool secret reference (valid or not)."""
    return isinstance(value, str) and value.startswith(SECRET_PREFIX)


def static_params_errors(
    query: Mapping[str, Any],
    header: Mapping[str, Any],
    body: Mapping[str, Any],
    *,
    run_values: bool = False,
) -> list[InitErrorDetails]:
    """The located errors of every literal credential in static params (empty: none)."""
    errors: list[InitErrorDetails] = []
    for where, values in (("query", query), ("header", header)):
        for name, value in values.items():
            if looks_like_credential(name):
                errors.append(_error((where, name), _named(where, name)))
                continue
            shape = token_shape(value) if isinstance(value, str) and not run_values else None
            if shape is not None:
                errors.append(_error((where, name), _shaped(where, name, shape)))
    if not run_values:
        references = body_secret_references(body)
        for name, reference in references.items():
            try:
                secret_name(reference)
            except ValueError as exc:
                errors.append(_error(("body", name), f"the secret reference {exc}"))
        literals = {k: v for k, v in body.items() if k not in references}
        for finding in find_literal_credentials(literals, field_rule=_credential_field):
            errors.append(_error(("body", *finding.path), _in_body(finding)))
        for path in _nested_references(literals):
            errors.append(_error(("body", *path), _NESTED_REFERENCE))
    return errors


def _credential_field(name: str, value: Any) -> bool:
    """A credential-named field with a literal value (a nested reference is refused apart)."""
    return not _is_reference(value) and looks_like_credential_field(name, value)


_NESTED_REFERENCE = (
    "a secret reference ('secret:NAME') is resolved only as the value of a top-level body "
    "field; here it would be sent as that text"
)


def _nested_references(body: Mapping[str, Any]) -> list[tuple[str | int, ...]]:
    """Paths of ``secret:`` strings below the top level of ``body`` (walked with a stack)."""
    found: list[tuple[str | int, ...]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), body)]
    while stack:
        path, item = stack.pop()
        if len(path) > MAX_DEPTH:
            continue  # find_literal_credentials reports it
        if isinstance(item, Mapping):
            stack.extend(((*path, str(k)), v) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend(((*path, i), v) for i, v in enumerate(item))
        elif _is_reference(item) and len(path) > 1:
            found.append(path)
    return sorted(found, key=str)


def _error(loc: tuple[str | int, ...], message: str) -> InitErrorDetails:
    return InitErrorDetails(
        type=PydanticCustomError("literal_credential", message),
        loc=loc,
        input="***",
    )


def _named(where: str, name: str) -> str:
    return (
        f"'{name}' looks like a credential, and {_NEVER_STORED}: use auth instead (e.g. "
        f"{{type: api_key, in: {where}, name: {name}, secret: 'secret:NAME'}}, or type bearer / "
        f"basic) — {HOW_TO_STORE}"
    )


def _shaped(where: str, name: str, shape: str) -> str:
    return (
        f"the value of {where} '{name}' looks like {shape}, and {_NEVER_STORED}: "
        f"{HOW_TO_STORE} (e.g. auth {{type: api_key, in: {where}, name: {name}, "
        "secret: 'secret:NAME'}, or type bearer / basic)"
    )


def _in_body(finding: Finding) -> str:
    field = ".".join(str(part) for part in finding.path)
    if finding.rule == "max_depth":
        return (
            f"'{field}' is {finding.what}: a static body this deep cannot be checked for "
            "literal credentials"
        )
    seen = (
        f"'{field}' is a credential-named field with a literal value"
        if finding.rule == "credential_field"
        else f"the value of '{field}' looks like {finding.what}"
    )
    return (
        f"{seen}, and {_NEVER_STORED}: {HOW_TO_STORE}, which sends it in a header or the "
        "query; an API that takes it in the body gets it from a top-level static body field "
        "whose value is the reference ('client_secret: secret:NAME')"
    )
