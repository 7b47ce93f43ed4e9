"""Argument validators of tools, compiled once per tool (not on every call).

The registry hands out the same :class:`ToolConfig` object until it reloads, so validators are
cached by object identity (checked with ``is``); a reload or an edit makes new objects and
new entries. The cache is bounded: when full it starts again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from dynamic_tools.engine.params import FORMATS
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.violations import Violation

__all__ = ["ArgumentValidators", "schema_violations"]


class ArgumentValidators:
    """A bounded identity cache of each tool's input-schema validators.

    Two per tool at most: the plain one, and one that also checks ``format`` (for values a
    model chose).
    """

    def __init__(self, max_entries: int = 4096) -> None:
        self._entries: dict[tuple[int, bool], tuple[ToolConfig, Draft202012Validator]] = {}
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self.compiled = 0  # how many validators were built (for tests and metrics)

    def get(self, tool: ToolConfig, *, formats: bool = False) -> Draft202012Validator:
        """The validator of ``tool``'s input schema, built on first use."""
        key = (id(tool), formats)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is tool:
            return entry[1]
        validator = Draft202012Validator(
            tool.input_schema(), format_checker=FORMATS if formats else None
        )
        with self._lock:
            if len(self._entries) >= self._max_entries:
                self._entries.clear()
            self._entries[key] = (tool, validator)
            self.compiled += 1
        return validator

    def violations(
        self, tool: ToolConfig, arguments: Mapping[str, Any], *, formats: bool = False
    ) -> list[Violation]:
        """Where ``arguments`` do not match ``tool``'s input schema (empty when they do).

        ``formats``: ``format`` is checked too (a date written as a date...), for arguments a
        model chose; a workflow's literal arguments are checked when the document is saved.
        """
        return schema_violations(self.get(tool, formats=formats), arguments)


def schema_violations(validator: Draft202012Validator, value: Any) -> list[Violation]:
    """The schema errors of ``value``, in path order, as violations (``(arguments)`` = root)."""
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.path])
    return [
        Violation(
            path=".".join(str(p) for p in e.path) or "(arguments)",
            rule=str(e.validator),
            message=e.message,
        )
        for e in errors
    ]
