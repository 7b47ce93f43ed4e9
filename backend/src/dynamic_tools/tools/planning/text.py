"""Words and lexical ranking for the planner: a small tokeniser and BM25 (bm25s) scores.

Tokens are lower-case runs of letters and digits; ``_``, ``-``, ``.`` and ``/`` split words
(``search_flights`` → ``search``, ``flights``). English stop words (bm25s's list plus a few
words every tool description uses) are dropped. Endings are folded so that a goal and a
description meet: ``-ies`` → ``-y``, ``-ing`` and a plural ``-s`` are removed (``bookings``,
``booking`` and ``book`` are one term; ``flights`` is ``flight``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+")
_OURS = {
    "after", "before", "call", "calls", "e", "eg", "from", "g", "i", "id", "it", "its", "me",
    "my", "one", "our", "please", "return", "returns", "use", "want", "we", "when", "you",
}  # fmt: skip


@functools.cache
def _stop_words() -> frozenset[str]:
    """bm25s's English stop words and ours (bm25s and numpy load on the planner's first use)."""
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN) | _OURS


def stem(word: str) -> str:
    """Fold a word's ending (``flights`` → ``flight``, ``bookings`` → ``book``)."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    return word


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` split at anything but letters and digits (no stems)."""
    return _WORD.findall(text.lower())


def tokens(text: str) -> list[str]:
    """The indexed terms of ``text``: words without stop words, endings folded."""
    stop = _stop_words()
    return [stem(w) for w in words(text) if w not in stop and len(w) > 1]


@dataclass(frozen=True)
class Match:
    """How one document matches a goal."""

    index: int
    score: float
    matched: frozenset[str]
    coverage: float
    """Share of the goal's known terms the document contains (0 to 1)."""


def rank(goal_terms: Sequence[str], documents: Sequence[Sequence[str]]) -> list[Match]:
    """BM25 scores of ``documents`` for ``goal_terms``, best first (input order breaks ties).

    Args:
        goal_terms: The goal's known terms (the caller drops words that occur in no document
            of any index: those are values); repeated terms count once. Coverage is measured
            against all of them.
        documents: Each document's terms.

    Returns:
        One :class:`Match` per document; all zero when no goal term occurs in any document.
    """
    query = list(dict.fromkeys(goal_terms))
    if not documents:
        return []
    import bm25s  # with numpy: only when the planner first ranks something

    index = bm25s.BM25()
    index.index([list(d) or [""] for d in documents], show_progress=False)
    known = [t for t in query if t in index.vocab_dict]
    scores = index.get_scores(known) if known else [0.0] * len(documents)
    matches = []
    for i, document in enumerate(documents):
        matched = frozenset(known) & frozenset(document)
        coverage = len(matched) / len(query) if query else 0.0
        matches.append(Match(i, float(scores[i]), matched, coverage))
    return sorted(matches, key=lambda m: (-m.score, m.index))
