"""Lexical narrowing of candidate tools with BM25 (bm25s) before the LLM sees them.

Each tool is indexed by its name (split on ``_``/``-``), description, hint and parameter
names and descriptions. Indexes are cached by the candidate set's content, so a repeated set
of tools is indexed once.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from dynamic_tools.tools.models import ToolConfig

if TYPE_CHECKING:
    import bm25s

_WORD_SPLIT = re.compile(r"[_\-./]")


def tool_document(tool: ToolConfig) -> str:
    """The text BM25 indexes for one tool."""
    parts = [_WORD_SPLIT.sub(" ", tool.name), tool.description, tool.hints.hint or ""]
    for name, param in tool.parameters.items():
        parts.append(_WORD_SPLIT.sub(" ", name))
        parts.append(str(param.schema_.get("description", "")))
    return " ".join(p for p in parts if p)


class ToolRanker:
    """Ranks candidate tools against instructions; keeps the top ``k``."""

    def __init__(self, cache_size: int = 32) -> None:
        self._cache: OrderedDict[tuple[str, ...], bm25s.BM25] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def top_k(self, query: str, tools: list[ToolConfig], k: int) -> list[ToolConfig]:
        """The ``k`` best tools for ``query``, best first (input order breaks ties)."""
        if len(tools) <= k:
            return list(tools)
        index = self._index([tool_document(t) for t in tools])
        import bm25s  # with numpy: only when a request has more candidates than k

        words = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        known = [w for w in words if w in index.vocab_dict]
        if not known:
            return list(tools[:k])
        scores = index.get_scores(known)
        order = sorted(
            range(len(tools)), key=lambda i: -float(scores[i])
        )  # stable: ties keep order
        return [tools[i] for i in order[:k]]

    def _index(self, documents: list[str]) -> bm25s.BM25:
        key = tuple(documents)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        import bm25s

        index = bm25s.BM25()
        index.index(
            bm25s.tokenize(documents, stopwords="en", show_progress=False), show_progress=False
        )
        with self._lock:
            self._cache[key] = index
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return index
