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

No schema deeper than ``MAX_SCHEMA_DEPTH`` levels (dicts and lists; GitHub's deepest
generated tool has 22) passes: it is refused with a :class:`SchemaError` naming the path,
because both walks, pydantic's serialiser and every later copy recurse once per level. The
quick walk measures the height as it goes (one pass; its recursion stops at the limit), so a
schema it accepts is known to be within the limit too; any other schema is measured without
recursion (:func:`~dynamic_tools.safe_parsing.find_too_deep`) before ``jsonschema`` sees it.

Inside :func:`remembering` (one whole conversion), each sub-schema the quick walk accepted is
remembered by identity with its height, so the expansions a converter shares between tools
(GitHub's ``simple-user`` is in hundreds of them) are walked once. Only for schemas that
nothing mutates while the block runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


_KNOWN: ContextVar[dict[int, tuple[Any, int]] | None] = ContextVar("known_schemas", default=None)
_UNBOUNDED = 1 << 30


@contextmanager
def remembering() -> Iterator[None]:
    """Within the block, sub-schemas found valid are remembered (see the module docstring)."""
    token = _KNOWN.set({})
    try:
        yield
    finally:
        _KNOWN.reset(token)


def check_schema(schema: Any) -> None:
    """Raise :class:`jsonschema.exceptions.SchemaError` unless ``schema`` is valid (2020-12)."""
    known = _KNOWN.get()
    if _valid_height(schema, {} if known is None else known, MAX_SCHEMA_DEPTH) is not None:
        return  # certainly valid, and no deeper than the limit
    too_deep = find_too_deep(schema, MAX_SCHEMA_DEPTH)
    if too_deep is not None:
        where = shorten(".".join(str(p) for p in too_deep)) or "(root)"
        raise SchemaError(f"nested deeper than {MAX_SCHEMA_DEPTH} levels (at {where})")
    Draft202012Validator.check_schema(schema)


def quick_valid(schema: Any) -> bool:
    """True only when ``schema`` is certainly valid; False means "ask jsonschema".

    Recursive, once per schema level: measure the nesting first (as :func:`check_schema`).
    """
    return _valid_height(schema, {}, _UNBOUNDED) is not None


def _valid_height(schema: Any, known: dict[int, tuple[Any, int]], room: int) -> int | None:
    """How deep ``schema`` nests (dicts and lists), or None ("ask jsonschema", or too deep).

    A height only when ``schema`` is certainly valid and nests at most ``room`` deep.
    Recurses once per schema level, and each is a level of nesting: never past ``room``.
    """
    if isinstance(schema, bool):
        return 0
    if not isinstance(schema, dict) or room <= 0:
        return None
    seen = known.get(id(schema))
    if seen is not None and seen[0] is schema:
        return seen[1] if seen[1] <= room else None
    inner = room - 1  # for its values
    tallest = 0
    for key, value in schema.items():
        height: int | None
        if key in _ONE_SCHEMA:
            height = _valid_height(value, known, inner)
        elif key in _SCHEMA_MAPS:
            height = _schemas_height(value, known, inner) if isinstance(value, dict) else None
        elif key in _SCHEMA_ARRAYS:
            height = _schemas_height(value, known, inner) if isinstance(value, list) else None
        elif key == "patternProperties":
            valid = isinstance(value, dict) and all(_compiles(k) for k in value)
            height = _schemas_height(value, known, inner) if valid else None
        else:
            height = _plain_height(value, inner) if _valid_keyword(key, value) else None
        if height is None:
            return None
        tallest = max(tallest, height)
    known[id(schema)] = (schema, tallest + 1)
    return tallest + 1


def _schemas_height(
    value: dict[Any, Any] | list[Any], known: dict[int, tuple[Any, int]], room: int
) -> int | None:
    """A mapping (``properties``...) or a non-empty list (``allOf``...) of schemas."""
    items = value.values() if isinstance(value, dict) else value
    if room <= 0 or not (value or isinstance(value, dict)):
        return None
    tallest = 0
    for item in items:
        height = _valid_height(item, known, room - 1)
        if height is None:
            return None
        tallest = max(tallest, height)
    return tallest + 1


def _plain_height(value: Any, room: int) -> int | None:
    """How deep a keyword's value nests (``enum``, ``default``...); None past ``room``."""
    if not isinstance(value, dict | list):
        return 0
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > room:
            return None
        below: list[Any] = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, dict | list):
                    below.append(child)
        level = below
    return depth


def _valid_keyword(key: str, value: Any) -> bool:
    """Whether a keyword holding no sub-schema certainly has a valid value."""
    if key == "type":
        return _valid_type(value)
    if key in _STRINGS:
        return isinstance(value, str)
    if key in _NUMBERS:
        return _is_number(value)
    if key in _COUNTS:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if key in _BOOLEANS:
        return isinstance(value, bool)
    if key in _ARRAYS:
        return isinstance(value, list)
    if key == "required":
        return _string_set(value)
    if key == "pattern":
        return isinstance(value, str) and _compiles(value)
    if key == "multipleOf":
        return _is_number(value) and value > 0
    if key == "dependentRequired":
        return isinstance(value, dict) and all(_string_set(v) for v in value.values())
    return key not in _UNSURE  # const, default and unknown keywords take any value


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
