"""A fast, exact check that a JSON Schema is valid against the draft 2020-12 metaschema.

``jsonschema``'s ``Draft202012Validator.check_schema`` walks the metaschema with dynamic
references and takes about 1 ms for a tiny schema and a third of a second for a large one
(a GitHub repository object): too slow for a catalog of 1,200 generated tools.

:func:`check_schema` first runs :func:`quick_valid`, a direct walk over the keywords the
metaschema constrains. It is *sound*: it answers True only for schemas the metaschema accepts,
and answers False whenever it is not sure (URI-valued keywords such as ``$ref``, ``$id``,
``$schema``; floats where integers are expected; anything malformed). Only then does the full
``jsonschema`` check run, which raises :class:`jsonschema.exceptions.SchemaError` with its own
message. The result is therefore exactly that of ``check_schema``, faster.

Before either, the schema's nesting is measured without recursion: a schema deeper than
``MAX_SCHEMA_DEPTH`` levels (dicts and lists; GitHub's deepest generated tool has 22) is
refused with a :class:`SchemaError` naming the path, because both walks, pydantic's
serialiser and every later copy recurse once per level.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from dynamic_tools.safe_parsing import find_too_deep, shorten

MAX_SCHEMA_DEPTH = 100

_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_ONE_SCHEMA = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_SCHEMA_MAPS = frozenset({"properties", "dependentSchemas", "$defs", "definitions"})
_SCHEMA_ARRAYS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_NUMBERS = frozenset({"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})
_COUNTS = frozenset(
    {
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
    }
)
_STRINGS = frozenset(
    {"title", "description", "format", "contentEncoding", "contentMediaType", "$comment"}
)
_BOOLEANS = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})
_ARRAYS = frozenset({"enum", "examples"})
_UNSURE = frozenset(
    {
        "$id",
        "$schema",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "$recursiveRef",
        "$recursiveAnchor",
        "dependencies",
    }
)


def check_schema(schema: Any) -> None:
    """Raise :class:`jsonschema.exceptions.SchemaError` unless ``schema`` is valid (2020-12)."""
    too_deep = find_too_deep(schema, MAX_SCHEMA_DEPTH)
    if too_deep is not None:
        where = shorten(".".join(str(p) for p in too_deep)) or "(root)"
        raise SchemaError(f"nested deeper than {MAX_SCHEMA_DEPTH} levels (at {where})")
    if not quick_valid(schema):
        Draft202012Validator.check_schema(schema)


def quick_valid(schema: Any) -> bool:
    """True only when ``schema`` is certainly valid; False means "ask jsonschema"."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        if key in _ONE_SCHEMA:
            ok = quick_valid(value)
        elif key in _SCHEMA_MAPS:
            ok = isinstance(value, dict) and all(quick_valid(v) for v in value.values())
        elif key in _SCHEMA_ARRAYS:
            ok = isinstance(value, list) and bool(value) and all(quick_valid(v) for v in value)
        elif key == "type":
            ok = _valid_type(value)
        elif key in _STRINGS:
            ok = isinstance(value, str)
        elif key in _NUMBERS:
            ok = _is_number(value)
        elif key in _COUNTS:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        elif key in _BOOLEANS:
            ok = isinstance(value, bool)
        elif key in _ARRAYS:
            ok = isinstance(value, list)
        elif key == "required":
            ok = _string_set(value)
        elif key == "pattern":
            ok = isinstance(value, str) and _compiles(value)
        elif key == "patternProperties":
            ok = isinstance(value, dict) and all(
                _compiles(k) and quick_valid(v) for k, v in value.items()
            )
        elif key == "multipleOf":
            ok = _is_number(value) and value > 0
        elif key == "dependentRequired":
            ok = isinstance(value, dict) and all(_string_set(v) for v in value.values())
        elif key in _UNSURE:
            ok = False
        else:  # const, default and unknown keywords take any value
            ok = True
        if not ok:
            return False
    return True


def _valid_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) and v in _TYPES for v in value)
        and len(set(value)) == len(value)
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _string_set(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


@lru_cache(maxsize=4096)
def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError):
        return False
    return True
