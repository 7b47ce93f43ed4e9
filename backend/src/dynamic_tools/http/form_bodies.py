"""Form and multipart request bodies: a tool's ``in: body`` fields as form pairs or parts.

A tool's ``api.content_type`` (README, "Tool configs") says how its body fields travel:

- ``application/json`` (the default): one JSON object;
- ``application/x-www-form-urlencoded``: OpenAPI's defaults for form bodies (style ``form``,
  ``explode: true``) — a string, number or boolean is one pair (booleans ``true``/``false``),
  an array is one pair per item under the field's name, an object is exploded into one pair
  per property (its name, not the field's); a null field or property is left out. A value
  nested deeper (an object inside an array) is sent as its JSON text;
- ``multipart/form-data``: one part per field, in order — a string, number or boolean as a
  text part, an object or array as an ``application/json`` part, and a *binary* field as a
  file part.

A file field (``tools/file_fields.py``: ``format: binary``, ``contentEncoding`` or
``contentMediaType``) is a file part: its value is a string (the content) or an object
``{filename, content_type, content_base64}`` (or ``content``). A value that is neither, bad
base64, or a filename or media type a part header cannot carry is refused before anything is
sent, naming the field.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.file_fields import FILE_OBJECT, binary_items, is_binary
from dynamic_tools.tools.models import Parameter

__all__ = ["Part", "form_pairs", "multipart_parts", "shown_part", "urlencoded", "wire_text"]

OCTET_STREAM = "application/octet-stream"
_MEDIA_TYPE = re.compile(
    r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+(;[\t\x20-\x7e]*)?$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Part:
    """One part of a multipart body: its field name, content and headers."""

    name: str
    content: bytes
    content_type: str | None = None  # None: a text part (no Content-Type header)
    filename: str | None = None  # set: a file part

    def httpx_file(self) -> tuple[str, tuple[str | None, bytes, str | None]]:
        """The part as an entry of httpx's ``files`` (a filename None is a plain part)."""
        return (self.name, (self.filename, self.content, self.content_type))


# --- application/x-www-form-urlencoded --------------------------------------------------------
def wire_text(value: Any, *, ensure_ascii: bool = False) -> str:
    """A value as text on the wire: ``true``/``false``, compact JSON for an object or array."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii)
    return str(value)


def form_pairs(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs of a form body (style form, explode true; see above)."""
    pairs: list[tuple[str, str]] = []
    for name, value in body.items():
        if value is None:
            continue
        if isinstance(value, dict):
            pairs.extend((str(k), wire_text(v)) for k, v in value.items() if v is not None)
        elif isinstance(value, list):
            pairs.extend((name, wire_text(item)) for item in value if item is not None)
        else:
            pairs.append((name, wire_text(value)))
    return pairs


def urlencoded(pairs: list[tuple[str, str]]) -> bytes:
    """The wire form of form pairs (``a=1&b=x+y``)."""
    return urlencode(pairs).encode("utf-8")


# --- multipart/form-data ----------------------------------------------------------------------
def multipart_parts(body: Mapping[str, Any], parameters: Mapping[str, Parameter]) -> list[Part]:
    """The parts of a multipart body; ``parameters``: the tool's (a body one's schema says a file).

    Raises:
        InvalidInputError: a file field's value is not a file (names the field).
    """
    parts: list[Part] = []
    for name, value in body.items():
        if value is None:
            continue
        param = parameters.get(name)
        schema = param.schema_ if param is not None and param.location == "body" else {}
        items = binary_items(schema)
        if is_binary(schema):
            parts.append(_file_part(name, name, value, schema))
        elif items is not None and isinstance(value, list):
            parts.extend(
                _file_part(name, f"{name}[{i}]", item, items) for i, item in enumerate(value)
            )
        elif isinstance(value, dict | list):
            parts.append(Part(name, wire_text(value).encode("utf-8"), "application/json"))
        else:
            parts.append(Part(name, wire_text(value).encode("utf-8")))
    return parts


def _refuse(where: str, message: str) -> InvalidInputError:
    return InvalidInputError(
        f"file field '{where}' {message}",
        violations=[{"path": where, "rule": "file", "message": message}],
    )


def _file_part(name: str, where: str, value: Any, schema: Mapping[str, Any]) -> Part:
    base64_text = schema.get("contentEncoding") == "base64"
    media = schema.get("contentMediaType")
    content_type = media if isinstance(media, str) else OCTET_STREAM
    filename = name
    if isinstance(value, str):
        content = _decoded(where, value) if base64_text else value.encode("utf-8")
    elif isinstance(value, dict):
        unknown = set(value) - set(FILE_OBJECT["properties"])
        if unknown:
            raise _refuse(where, f"has unknown keys {sorted(unknown)}; {_FILE_SHAPE}")
        if ("content_base64" in value) == ("content" in value):
            raise _refuse(where, f"needs exactly one of content_base64 and content; {_FILE_SHAPE}")
        raw = value.get("content_base64", value.get("content"))
        if not isinstance(raw, str):
            raise _refuse(where, "content must be a string")
        content = _decoded(where, raw) if "content_base64" in value else raw.encode("utf-8")
        filename = _filename(where, value.get("filename", name))
        content_type = value.get("content_type", content_type)
    else:
        raise _refuse(where, f"must be a string (the file's content) or {_FILE_SHAPE}")
    return Part(name, content, _content_type(where, content_type), filename)


_FILE_SHAPE = "an object {filename, content_type, content_base64 (or content)}"


def _decoded(where: str, text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _refuse(where, "is not valid base64") from None


def _filename(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > 255 or _CONTROL.search(value):
        raise _refuse(where, "has a filename that is empty, too long or holds control characters")
    return value


def _content_type(where: str, value: Any) -> str:
    if not isinstance(value, str) or not _MEDIA_TYPE.match(value):
        raise _refuse(where, "has a content_type that is not a media type (like image/png)")
    return value


def shown_part(part: Part) -> dict[str, Any]:
    """A file part as shown in a request's spec: its name, media type and size, not its bytes."""
    return {
        "filename": part.filename,
        "content_type": part.content_type,
        "size_bytes": len(part.content),
    }
