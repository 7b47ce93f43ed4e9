"""Summaries for an import preview: group prefixes and a token-capped command list."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from dynamic_tools.tools.models import ToolConfig

CHARS_PER_TOKEN = 4  # a rough, conservative estimate for English text and JSON


def group_prefixes(tools: Sequence[ToolConfig], prefix: str | None) -> list[dict[str, Any]]:
    """Command groups (the first tag, else ``(untagged)``) with their sizes, largest first.

    With a catalog prefix each group is shown as ``<prefix>_<group>``.
    """
    counts = Counter(t.hints.category or "(untagged)" for t in tools)
    return [
        {"group": f"{prefix}_{group}" if prefix else group, "count": count}
        for group, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def command_preview(
    tools: Sequence[ToolConfig], max_tokens: int
) -> tuple[list[dict[str, Any]], bool]:
    """``(entries, truncated)``: one short entry per tool until about ``max_tokens`` tokens."""
    entries: list[dict[str, Any]] = []
    used = 0
    for tool in tools:
        entry = {
            "name": tool.name,
            "method": tool.api.method,
            "path": tool.api.path,
            "summary": tool.description.split("\n", 1)[0][:160],
            "parameters": [n for n, p in tool.parameters.items() if p.required]
            + [f"{n}?" for n, p in tool.parameters.items() if not p.required],
        }
        cost = len(json.dumps(entry)) // CHARS_PER_TOKEN + 1
        if used + cost > max_tokens:
            return entries, True
        entries.append(entry)
        used += cost
    return entries, False
