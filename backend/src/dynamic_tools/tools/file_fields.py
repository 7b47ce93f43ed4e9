"""File fields of a multipart tool: which body fields are files, and what value they take.

A body field of a ``multipart/form-data`` tool is a *file* when its schema says
``format: binary``, ``contentEncoding`` or ``contentMediaType`` (an array of such items is a
list of files). Its value, as a run or a model gives it (README, "Tool configs"):

- a string: the file's content — its text as UTF-8, or, when the schema says
  ``contentEncoding: base64``, the bytes the base64 text encodes;
- an object :data:`FILE_OBJECT`, ``{filename, content_type, content_base64}`` (or ``content``
  for text instead of ``content_base64``): ``filename`` defaults to the field's name,
  ``content_type`` to the schema's ``contentMediaType``, else ``application/octet-stream``.

:func:`accepted_schema` is the field's schema as the tool's input schema shows it (the string
or the object); ``http/form_bodies.py`` turns the value into a file part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FILE_OBJECT", "accepted_schema", "binary_items", "is_binary"]

#: what a file field accepts besides a string: a file with its name and media type
FILE_OBJECT: dict[str, Any] = {
    "type": "object",
    "description": "A file: its content as base64 (content_base64) or as text (content)",
    "properties": {
        "filename": {"type": "string", "minLength": 1, "maxLength": 255},
        "content_type": {"type": "string", "description": "Its media type, e.g. image/png"},
        "content_base64": {"type": "string", "contentEncoding": "base64"},
        "content": {"type": "string", "description": "Text content, sent as UTF-8"},
    },
    "additionalProperties": False,
    "oneOf": [{"required": ["content_base64"]}, {"required": ["content"]}],
}


def is_binary(schema: Mapping[str, Any]) -> bool:
    """Whether a field's schema describes a file (``format: binary``, content keywords)."""
    return (
        schema.get("format") == "binary"
        or "contentEncoding" in schema
        or "contentMediaType" in schema
    )


def binary_items(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The item schema of an array of files, or None."""
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping) and is_binary(items):
        return items
    return None


def accepted_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema a multipart field's argument must match: a file also as :data:`FILE_OBJECT`."""
    if is_binary(schema):
        return _either(schema)
    items = binary_items(schema)
    if items is not None:
        return {**schema, "items": _either(dict(items))}
    return schema


def _either(schema: dict[str, Any]) -> dict[str, Any]:
    own = {k: v for k, v in schema.items() if k != "description"}
    either: dict[str, Any] = {"anyOf": [own, FILE_OBJECT]}
    if "description" in schema:
        either["description"] = schema["description"]
    return either
