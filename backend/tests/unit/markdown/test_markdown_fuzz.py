"""Fuzzing the markdown workflow parser: any text gives a workflow or a MarkdownWorkflowError.

Documents are drawn as lines of the format's own pieces (step headings, sections, fences,
list items, placeholders) in any order, and as the shipped examples cut and repeated.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.markdown.parser import parse_markdown
from tests.support.fuzz import FUZZ, mutated

REPO = Path(__file__).resolve().parents[4]
EXAMPLES = [p.read_text(encoding="utf-8") for p in sorted((REPO / "examples").rglob("*.md"))]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "full.md"
TEXTS = [*EXAMPLES, FIXTURE.read_text(encoding="utf-8")]

LINES = [
    "# Title", "## Section", "### 🔧 WORKFLOW STEP: search", "## WORKFLOW STEP: book",
    "# workflow step:", "#### 🔧 WORKFLOW STEP: search", "```", "~~~", "````", "```json",
    "Search flights from [ORIGIN] to [DESTINATION].", "\\[not a placeholder]",
    "[LINK](http://x)", "🛠️ TOOL: search_flights", "TOOLS: a, b", "🛠️ TOOLS:", "TOOL:",
    "📥 INPUTS:", "📤 OUTPUTS:", "✅ ASSERT:", "ASSERTIONS:", "- ORIGIN", "- [ORIGIN]",
    "- ORIGIN (optional)", "- flights → FLIGHTS", "- $.id -> BOOKING_ID", "* x", "+ y",
    "1. first", "2) second", "  continued", "", "   ", "prose", "- ", "-",
    "- [FLIGHTS] is not empty", "🔧", "WORKFLOW STEP: x",
]  # fmt: skip


def _parse(text: str) -> None:
    try:
        parse_markdown(text, source="fuzz.md")
    except DynamicToolsError as error:
        assert error.message


@FUZZ
@given(lines=st.lists(st.one_of(st.sampled_from(LINES), st.text(max_size=10)), max_size=30))
@example(lines=["### WORKFLOW STEP: a", "```", "do [X]", "```", "TOOL: t", "INPUTS:", "- X"])
def test_documents_of_the_formats_lines_parse_or_are_refused(lines: list[str]) -> None:
    _parse("\n".join(lines))


@FUZZ
@given(text=st.text(max_size=300))
def test_any_text_parses_or_is_refused(text: str) -> None:
    _parse(text)


@FUZZ
@given(data=st.data())
def test_the_examples_cut_and_repeated_parse_or_are_refused(data: st.DataObject) -> None:
    _parse(data.draw(mutated(TEXTS)))
