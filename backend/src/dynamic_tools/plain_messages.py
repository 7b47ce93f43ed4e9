"""Error messages in words, for every edge (REST answers and MCP tool errors alike).

pydantic's prefixes ("Value error, ") are dropped, a name pattern the product checks is said in
words instead of its regex, and violations are ordered the most useful first: a missing field or
a thing not found before a pattern mismatch (docs/architecture.md, the dependency rules).
"""

from __future__ import annotations

import re
from typing import Any

from dynamic_tools.definitions.files import FILE_NAME
from dynamic_tools.engine.node_parts import IDENTIFIER
from dynamic_tools.tools.catalogs import CATALOG_NAME_WORDS, CATALOG_PREFIX_WORDS
from dynamic_tools.tools.models import TOOL_NAME_PATTERN
from dynamic_tools.tools.openapi.catalog_files import CATALOG_NAME, CATALOG_PREFIX

__all__ = ["PATTERN_WORDS", "plain_message", "plain_payload", "plain_violations"]

PATTERN_WORDS: dict[str, str] = {
    CATALOG_NAME.pattern: f"a catalog name is {CATALOG_NAME_WORDS}",
    CATALOG_PREFIX.pattern: f"a tool name prefix is {CATALOG_PREFIX_WORDS}",
    TOOL_NAME_PATTERN: "a tool name is 1-64 letters, digits, '-' or '_'",
    IDENTIFIER: "an identifier is 1-64 letters, digits or '_', not starting with a digit",
    FILE_NAME.pattern: "a file name is letters, digits, '_', '.' or '-' ending in .yaml, .yml, "
    ".json or .xml",
}
"""The name patterns the API checks, in words: a violation quoting one says this instead."""

_FRAMEWORK_PREFIX = re.compile(r"(^|: )(?:Value error|Assertion failed), ")
_PATTERN_MISMATCH = re.compile(r"String should match pattern '(.*)'", re.DOTALL)
_FIRST_RULES = frozenset({"missing", "not_found", "required"})
_LAST_RULES = frozenset({"string_pattern_mismatch", "pattern"})


def plain_message(message: str) -> str:
    """``message`` without pydantic's prefixes, a known pattern in words instead of its regex."""
    message = _FRAMEWORK_PREFIX.sub(r"\1", message)
    mismatch = _PATTERN_MISMATCH.fullmatch(message)
    if mismatch and mismatch.group(1) in PATTERN_WORDS:
        return PATTERN_WORDS[mismatch.group(1)]
    return message


def _usefulness(violation: dict[str, Any]) -> int:
    rule = violation.get("rule")
    return 0 if rule in _FIRST_RULES else 2 if rule in _LAST_RULES else 1


def plain_violations(violations: list[Any]) -> list[Any]:
    """The violations with :func:`plain_message` messages, the most useful first.

    A missing field or a thing not found comes first, a pattern mismatch last; the order is
    kept otherwise.
    """
    plain = [
        {**v, "message": plain_message(v["message"])}
        if isinstance(v, dict) and isinstance(v.get("message"), str)
        else v
        for v in violations
    ]
    return sorted(plain, key=lambda v: _usefulness(v) if isinstance(v, dict) else 1)


def plain_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """An error body with a plain message and plain, ordered violations."""
    shaped = dict(payload)
    if isinstance(shaped.get("message"), str):
        shaped["message"] = plain_message(shaped["message"])
    if isinstance(shaped.get("violations"), list):
        shaped["violations"] = plain_violations(shaped["violations"])
    return shaped
