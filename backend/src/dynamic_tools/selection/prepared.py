"""Per-tool work done once: the LLM function and the context text.

(The argument validator is the invoker's, ``tools/validators.py``, shared by every caller.)

The registry hands out the same ToolConfig object until it reloads, so derived data is cached
by object identity (and checked with ``is``); a reload produces new objects and new entries.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from dynamic_tools.selection.function_schema import FunctionSpec, function_for_tool
from dynamic_tools.tools.context import format_tool
from dynamic_tools.tools.models import ToolConfig


@dataclass(frozen=True)
class PreparedTool:
    """A tool with everything the pipeline derives from it."""

    tool: ToolConfig
    function: FunctionSpec
    schema: dict[str, Any]
    size: int
    #: what the model reads, by (parameters shown, output shown)
    texts: dict[tuple[bool, bool], str]

    @property
    def context(self) -> str:
        """The full context text: the parameters, not the output."""
        return self.texts[(True, False)]

    def text(self, *, functions_shown: bool, chained: bool = False) -> str:
        """What the model reads of this tool (docs/performance.md, "Real models").

        Its parameters, unless the model reads them in the function definitions it is sent;
        its output only for a model that chains calls (``{prefix}_query``).
        """
        return self.texts[(not functions_shown, chained)]


def prepare(tool: ToolConfig) -> PreparedTool:
    """Derive the function, context texts, input schema and validator of ``tool``."""
    function = function_for_tool(tool)
    texts = {
        (params, output): format_tool(tool, parameters=params, output=output)
        for params in (True, False)
        for output in (True, False)
    }
    schema = tool.input_schema()
    size = len(texts[(True, False)]) + len(json.dumps(function.parameters))
    return PreparedTool(tool, function, schema, size, texts)


class PreparedTools:
    """A bounded identity cache of :class:`PreparedTool`."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._entries: dict[int, PreparedTool] = {}
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def get(self, tool: ToolConfig) -> PreparedTool:
        """The prepared form of ``tool``, computed on first use."""
        entry = self._entries.get(id(tool))
        if entry is not None and entry.tool is tool:
            return entry
        entry = prepare(tool)
        with self._lock:
            if len(self._entries) >= self._max_entries:
                self._entries.clear()
            self._entries[id(tool)] = entry
        return entry
