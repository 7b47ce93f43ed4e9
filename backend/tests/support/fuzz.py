"""Hypothesis strategies shared by the parser fuzz tests: JSON-like trees over a vocabulary.

Random text rarely gets past a parser's first check; trees whose keys and values are drawn
from the format's own words reach the later stages, where unexpected types and shapes live.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "400")),
    deadline=None,
    derandomize="FUZZ_EXAMPLES" not in os.environ,
    database=None,
)
"""Each fuzz test's bound: 400 fixed examples, no example database. ``FUZZ_EXAMPLES=5000`` runs
more, and random ones, for a longer hunt by hand."""

_SCALAR_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
)


def scalars(words: Sequence[str]) -> st.SearchStrategy[Any]:
    """JSON scalars, words of the format among them."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        _SCALAR_TEXT,
        st.sampled_from(list(words)),
    )


def trees(words: Sequence[str], *, max_leaves: int = 40) -> st.SearchStrategy[Any]:
    """JSON-like values whose mapping keys and strings are mostly the format's words."""
    keys = st.one_of(st.sampled_from(list(words)), _SCALAR_TEXT)
    return st.recursive(
        scalars(words),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(keys, children, max_size=6),
        ),
        max_leaves=max_leaves,
    )


@st.composite
def mutated(draw: st.DrawFn, texts: Sequence[str]) -> str:
    """One of ``texts`` with a few random cuts, insertions and repeats."""
    text = draw(st.sampled_from(list(texts)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        if not text:
            break
        start = draw(st.integers(min_value=0, max_value=len(text) - 1))
        end = draw(st.integers(min_value=start, max_value=min(len(text), start + 40)))
        action = draw(st.sampled_from(["cut", "insert", "repeat", "swap"]))
        if action == "cut":
            text = text[:start] + text[end:]
        elif action == "insert":
            text = text[:start] + draw(st.text(max_size=8)) + text[start:]
        elif action == "repeat":
            text = text[:end] + text[start:end] + text[end:]
        else:
            text = text[:start] + text[end:] + text[start:end]
    return text
