"""Values that travel as text, read as the type their parameter declares.

A path, query, header or cookie value is text on the wire: ``true``, ``42`` and ``2.5`` are
what a boolean, an integer and a number become (OpenAPI's serialisation). A workflow may hold
such a value as that text — an Arazzo input declared ``type: string`` that feeds a boolean
query parameter, say — and the call then takes the text as the value it spells, so the tool's
schema (enum, minimum…) checks the value and the request carries the same text. Text that
spells no value of the type stays as it is, and the tool's validation names the parameter.
A form or multipart field travels as text too; a JSON body's values keep their types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dynamic_tools.tools.models import JSON, ToolConfig

__all__ = ["read_text_values"]

_TEXT_LOCATIONS = frozenset({"path", "query", "header", "cookie"})
_INTEGER = re.compile(r"^-?(0|[1-9][0-9]{0,17})$")
_NUMBER = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$")


def read_text_values(tool: ToolConfig, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with each text value of a non-string text parameter read as its type."""
    read = dict(arguments)
    for name, value in arguments.items():
        param = tool.parameters.get(name)
        as_text = param is not None and (
            param.location in _TEXT_LOCATIONS
            or (param.location == "body" and tool.api.content_type != JSON)
        )
        if param is None or not as_text or not isinstance(value, str):
            continue
        kinds = param.schema_.get("type")
        kinds = {kinds} if isinstance(kinds, str) else set(kinds or ())
        if not kinds or "string" in kinds:
            continue
        read[name] = _spelled(value, kinds)
    return read


def _spelled(text: str, kinds: set[str]) -> Any:
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    if "integer" in kinds and _INTEGER.match(text):
        return int(text)
    if "number" in kinds and _NUMBER.match(text):
        number = float(text)
        return (
            int(number)
            if number.is_integer() and "." not in text and "e" not in text.lower()
            else number
        )
    return text
