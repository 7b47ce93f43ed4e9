"""Tool hints: the ``X-Tool-Hints`` header and the hint block.

Design: docs/design-sources.md#tool-discovery-design (strategy 1).

The header's value is a JSON object mapping a tool name to its hints::

    {"search_flights": {"category": "search", "outputs": ["flight_id"],
                        "next": ["check_availability"], "hint": "Always search first."}}

Some MCP clients send the object JSON-encoded a second time (a JSON *string* holding the
object); :func:`parse_tool_hints` accepts both. Keys are ``category``, ``requires``,
``outputs``, ``next`` and ``hint``; anything else is refused, so a typo never silently drops
a hint. Header hints override a tool's registry hints field by field (:func:`merge_hints`),
and :func:`hint_block` renders the tree the LLM sees::

    [travel API] Search available flights.
      ├─ Category: search
      ├─ Outputs: flight_id, airline, price
      ├─ Next: check_availability
      └─ Hint: Always search before booking.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.models import TOOL_NAME_PATTERN, ToolConfig, ToolHints

HEADER = "X-Tool-Hints"
MAX_HINTS_CHARS = 64_000
"""Largest header value accepted (characters), the same cap as any session header."""
MAX_HINTED_TOOLS = 500
MAX_LIST_ITEMS = 64
MAX_TEXT_CHARS = 2_000
MAX_NAME_CHARS = 128

HINT_FIELDS = ("category", "requires", "outputs", "next", "hint", "examples")
_TOOL_LIST_FIELDS = ("requires", "next")
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_LABELS = {
    "category": "Category",
    "requires": "Requires",
    "outputs": "Outputs",
    "next": "Next",
    "hint": "Hint",
    "examples": "Examples",
}


def parse_tool_hints(value: str | bytes | Mapping[str, Any] | None) -> dict[str, ToolHints]:
    """Parse and validate an ``X-Tool-Hints`` header value.

    Args:
        value: The header's raw text (a JSON object, or a JSON string holding one), an
            already decoded mapping, or None/blank for "no hints".

    Returns:
        Tool name → :class:`ToolHints`. Only the keys a tool's entry gave are in each
        model's ``model_fields_set``, which is what :func:`merge_hints` overrides.

    Raises:
        InvalidInputError: the value is too large, not JSON, not an object, or an entry
            breaks the format. Every problem is one violation with ``path`` (e.g.
            ``search_flights.requires[1]``), ``tool``, ``field``, ``rule`` and ``message``.
    """
    if value is None:
        return {}
    data: Any = value
    if isinstance(value, str | bytes):
        data = _decode(value)
        if data is None:
            return {}
    if not isinstance(data, Mapping):
        raise _invalid(
            [_violation(None, None, "type", f"expected a JSON object, got {_kind(data)}")]
        )
    if len(data) > MAX_HINTED_TOOLS:
        raise _invalid(
            [_violation(None, None, "size", f"at most {MAX_HINTED_TOOLS} tools may be hinted")]
        )
    hints: dict[str, ToolHints] = {}
    violations: list[dict[str, Any]] = []
    for tool_name, entry in data.items():
        found = _check_entry(str(tool_name), entry)
        if found:
            violations.extend(found)
        else:
            hints[str(tool_name)] = ToolHints.model_validate(dict(entry))
    if violations:
        raise _invalid(violations)
    return hints


def merge_hints(tool: ToolConfig, override: ToolHints | None) -> ToolHints:
    """A tool's hints with the header's hints laid over them, field by field.

    A field the override sets (even to an empty list or null) wins; a field it does not
    mention keeps the registry's value.

    Args:
        tool: The registered tool (its ``hints`` are the base).
        override: The header's hints for this tool, or None.

    Returns:
        The merged hints.
    """
    if override is None:
        return tool.hints
    given = override.model_fields_set
    merged = {
        name: getattr(override if name in given else tool.hints, name) for name in HINT_FIELDS
    }
    return ToolHints.model_validate(merged)


def hint_block(hints: ToolHints) -> str:
    """The design's tree of hint lines, only for fields that have a value.

    Args:
        hints: The hints to render.

    Returns:
        Lines such as ``"  ├─ Category: search"``, the last one drawn with ``└─``, joined
        with newlines; an empty string when no field has a value.
    """
    rows: list[tuple[str, str]] = []
    for name in HINT_FIELDS:
        value = getattr(hints, name)
        if name == "examples":
            value = [f'"{item}"' for item in value]
        text = ", ".join(value) if isinstance(value, list) else (value or "")
        text = " ".join(text.split())
        if text:
            rows.append((_LABELS[name], text))
    lines = [
        f"  {'└─' if index == len(rows) - 1 else '├─'} {label}: {text}"
        for index, (label, text) in enumerate(rows)
    ]
    return "\n".join(lines)


def describe_tool(tool: ToolConfig, hints: ToolHints, *, api_label: str | None) -> str:
    """A tool's description as the LLM sees it with ``ENABLE_TOOL_HINTS`` on.

    Args:
        tool: The tool.
        hints: Its effective hints (usually :func:`merge_hints` of registry and header).
        api_label: The API's label, shown as ``[label]`` before the description (the
            design's ``[flights.example.com GraphQL API]``); None for no label.

    Returns:
        ``"[label] description"`` followed, on the next lines, by :func:`hint_block`.
    """
    description = " ".join(tool.description.split())
    head = f"[{api_label}] {description}" if api_label else description
    block = hint_block(hints)
    return f"{head}\n{block}" if block else head


# --- parsing helpers ----------------------------------------------------------------------
def _decode(value: str | bytes) -> Any:
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid([_violation(None, None, "encoding", "not UTF-8 text")]) from None
    if len(value) > MAX_HINTS_CHARS:
        raise _invalid(
            [_violation(None, None, "size", f"longer than {MAX_HINTS_CHARS} characters")]
        )
    if not value.strip():
        return None
    data = _json(value)
    if isinstance(data, str):  # the object was JSON-encoded twice
        data = _json(data) if data.strip() else None
    return data


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise _invalid([_violation(None, None, "json", message)]) from None
    except RecursionError:  # nested past the decoder's limit; hints are two levels deep
        raise _invalid([_violation(None, None, "json", "nested too deeply")]) from None


def _check_entry(tool: str, entry: Any) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    if not _TOOL_NAME.match(tool):
        problems.append(
            _violation(
                tool, None, "tool_name", f"'{tool}' is not a tool name ({TOOL_NAME_PATTERN})"
            )
        )
    if not isinstance(entry, Mapping):
        problems.append(_violation(tool, None, "type", f"expected an object, got {_kind(entry)}"))
        return problems
    for key, value in entry.items():
        key = str(key)
        if key not in HINT_FIELDS:
            known = ", ".join(HINT_FIELDS)
            problems.append(_violation(tool, key, "unknown_key", f"unknown key; known: {known}"))
        elif key in ("category", "hint"):
            problems.extend(_check_text(tool, key, value))
        else:
            problems.extend(_check_list(tool, key, value))
    return problems


def _check_text(tool: str, field: str, value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, str):
        return [_violation(tool, field, "type", f"expected a string, got {_kind(value)}")]
    limit = MAX_TEXT_CHARS if field == "hint" else MAX_NAME_CHARS
    if len(value) > limit:
        return [_violation(tool, field, "size", f"longer than {limit} characters")]
    if field == "category" and not value.strip():
        return [_violation(tool, field, "empty", "must not be empty")]
    return []


def _check_list(tool: str, field: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return [_violation(tool, field, "type", f"expected a list of strings, got {_kind(value)}")]
    if len(value) > MAX_LIST_ITEMS:
        return [_violation(tool, field, "size", f"at most {MAX_LIST_ITEMS} items")]
    problems = []
    for index, item in enumerate(value):
        if not isinstance(item, str):
            message = f"expected a string, got {_kind(item)}"
            problems.append(_violation(tool, field, "type", message, index=index))
        elif field in _TOOL_LIST_FIELDS and not _TOOL_NAME.match(item):
            message = f"'{item}' is not a tool name ({TOOL_NAME_PATTERN})"
            problems.append(_violation(tool, field, "tool_name", message, index=index))
        elif not item.strip() or len(item) > _item_limit(field):
            message = f"must be 1 to {_item_limit(field)} characters"
            problems.append(_violation(tool, field, "size", message, index=index))
    return problems


def _item_limit(field: str) -> int:
    return MAX_TEXT_CHARS if field == "examples" else MAX_NAME_CHARS


def _violation(
    tool: str | None, field: str | None, rule: str, message: str, *, index: int | None = None
) -> dict[str, Any]:
    path = ".".join(p for p in (tool, field) if p) or "(value)"
    if index is not None:
        path += f"[{index}]"
    return {
        "header": HEADER,
        "path": path,
        "tool": tool,
        "field": field,
        "rule": rule,
        "message": message,
    }


def _invalid(violations: list[dict[str, Any]]) -> InvalidInputError:
    first = violations[0]
    where = f" at {first['path']}" if first["tool"] else ""
    more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
    return InvalidInputError(
        f"{HEADER} is invalid{where}: {first['message']}{more}",
        violations=violations,
        context={"header": HEADER},
    )


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
