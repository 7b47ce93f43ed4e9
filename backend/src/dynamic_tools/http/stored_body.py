r"""What an answer's body becomes once read: JSON, text, or a summary — within a stored budget.

A body is recorded (run store, events, step outputs, MCP results) in its JSON encoding, where a
control character takes six bytes (``\u0000``): 5 MB of NUL bytes would be stored as 30 MB, and
copied into every view of the run. So the budget is measured on the encoded form, not on the
decoded bytes:

- a binary media type (images, archives, ``application/octet-stream``...) or a body whose text
  is mostly control characters or invalid UTF-8 is stored as a **summary**: ``summarized``,
  the reason, its size, media type, SHA-256 and its first bytes as base64;
- JSON (by media type) is parsed, unless it nests past ``max_depth`` levels or was cut at the
  size limit (then it is kept as text);
- a form (``application/x-www-form-urlencoded``, as some OAuth token endpoints answer) is
  parsed into an object — a repeated name's values as a list — unless it was cut or has more
  than :data:`MAX_FORM_FIELDS` fields (then it is kept as text), so a workflow reads
  ``$token.access_token`` from it as from JSON;
- text or JSON whose encoding exceeds ``budget`` bytes is kept as text, cut so that its
  encoding fits, and flagged ``truncated``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from dynamic_tools.safe_parsing import TooDeep, loads_json
from dynamic_tools.tools.models import FORM

__all__ = ["StoredBody", "stored_body"]

#: a form answer with more fields than this is kept as text
MAX_FORM_FIELDS = 1000
#: bytes of a summarized body shown as base64
HEAD_BYTES = 64
#: a body with more than this share of control bytes or invalid UTF-8 is binary
BINARY_SHARE = 0.05
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_BINARY_TYPES = (
    "image/",
    "audio/",
    "video/",
    "font/",
    "application/octet-stream",
    "application/pdf",
    "application/zip",
    "application/gzip",
    "application/x-",
    "application/vnd.ms-",
    "application/wasm",
)
_TEXTUAL_X = ("application/x-www-form-urlencoded", "application/x-ndjson", "application/x-yaml")


@dataclass(frozen=True)
class StoredBody:
    """The body as it is recorded, and whether it was cut or replaced by a summary."""

    value: Any
    truncated: bool
    summarized: bool


def _media(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _binary_type(content_type: str) -> bool:
    media = _media(content_type)
    return media.startswith(_BINARY_TYPES) and not media.startswith(_TEXTUAL_X)


def _form(text: str) -> Any:
    """A form's fields as an object (a repeated name: a list), or ``text`` when it is not one."""
    try:
        pairs = parse_qsl(text.strip(), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except ValueError:  # more fields than MAX_FORM_FIELDS
        return text
    if not pairs:
        return text
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name not in fields:
            fields[name] = value
        elif isinstance(fields[name], list):
            fields[name].append(value)
        else:
            fields[name] = [fields[name], value]
    return fields


def _summary(content: bytes, content_type: str, reason: str, *, cut: bool) -> dict[str, Any]:
    return {
        "summarized": True,
        "reason": reason,
        "size_bytes": len(content),
        "size_is_lower_bound": cut,  # the answer went on past the read limit
        "content_type": content_type or None,
        "sha256": hashlib.sha256(content).hexdigest(),
        "first_bytes_base64": base64.b64encode(content[:HEAD_BYTES]).decode("ascii"),
    }


def _encoded_size(value: Any) -> int:
    return len(json.dumps(value, default=str))


def _fit_text(text: str, budget: int) -> str:
    """``text`` cut so that its JSON encoding is at most ``budget`` bytes."""
    size = _encoded_size(text)
    keep = len(text) if size <= budget else int(len(text) * budget / size)
    while keep > 0:
        size = _encoded_size(text[:keep])
        if size <= budget:
            break
        keep -= size - budget  # each character is at least one byte: this fits or nearly
    return text[: max(keep, 0)]


def stored_body(
    content: bytes, content_type: str, *, cut: bool, budget: int, max_depth: int
) -> StoredBody:
    """``content`` as it is recorded (see the module docstring)."""
    if _binary_type(content_type):
        return StoredBody(_summary(content, content_type, "binary media type", cut=cut), cut, True)
    controls = len(content) - len(content.translate(None, _CONTROL_BYTES))
    text = content.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd")
    if content and (controls + invalid) > BINARY_SHARE * len(content):
        reason = "control characters or invalid UTF-8"
        return StoredBody(_summary(content, content_type, reason, cut=cut), cut, True)
    value: Any = text
    if "json" in content_type.lower() and not cut:
        try:
            value = loads_json(text, max_depth)
        except (json.JSONDecodeError, TooDeep):  # not JSON, or nested past what is kept
            value = text
    elif _media(content_type) == FORM and not cut:
        value = _form(text)
    if _encoded_size(value) <= budget:
        return StoredBody(value, cut, False)
    return StoredBody(_fit_text(text, budget), True, False)
