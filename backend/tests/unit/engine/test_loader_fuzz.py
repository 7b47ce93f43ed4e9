"""Fuzzing the workflow loaders: whatever the text, only WorkflowInvalidError comes out.

YAML, JSON and XML documents are drawn three ways: random text, trees over the format's words
(so the model and the validator see odd types in the right places), and the shipped examples
with random cuts and repeats. Each document is loaded and, when it loads, validated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from dynamic_tools.engine.loaders import DocumentFormat, load_document
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import DynamicToolsError
from tests.support.fuzz import FUZZ, mutated, trees

REPO = Path(__file__).resolve().parents[4]
EXAMPLES = sorted((REPO / "examples" / "travel" / "workflows").iterdir())
SEEDS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "workflows" / "seeds").glob("*"))
TEXTS = {
    fmt: [p.read_text(encoding="utf-8") for p in [*EXAMPLES, *SEEDS] if p.suffix in suffixes]
    for fmt, suffixes in {"yaml": (".yaml", ".yml"), "json": (".json",), "xml": (".xml",)}.items()
}

WORDS = [
    "domain", "version", "workflows", "description", "params", "graph", "outputs", "timeout",
    "type", "required", "default", "format", "call", "args", "output", "depends_on", "when",
    "on_error", "retry", "delay", "backoff", "fallback", "max_delay", "jitter", "retry_on",
    "branch", "conditions", "goto", "default", "parallel", "branches", "on_partial_failure",
    "concurrency", "foreach", "items", "as", "max_iterations", "step", "workflow", "yield",
    "message", "expects", "compensate", "steps", "ignore_error", "error", "compensate_with",
    "success", "rest_call", "sql_query", "str", "int", "float", "bool", "list", "dict",
    "search_flights", "book", "a", "b", "$a", "$a.b.0", "$a.length", "range($a, $b)",
    "1 days", "$x > 1 && $y", "exponential", "linear", "constant", "abort", "continue",
    "rollback_all", "5xx", "429", "true", "false",
]  # fmt: skip
XML_TAGS = [
    "workflows", "workflow", "params", "param", "graph", "step", "call", "args", "arg",
    "output", "on_error", "compensate_with", "success", "subworkflow", "branch", "condition",
    "default", "parallel", "foreach", "yield", "expects", "field", "compensate", "error",
    "outputs",
]  # fmt: skip
XML_ATTRS = [
    "id", "domain", "version", "description", "timeout", "name", "type", "required", "format",
    "default", "tool", "value", "json", "depends_on", "retry", "delay", "backoff", "max_delay",
    "retry_on", "fallback", "workflow", "when", "goto", "on_partial_failure", "concurrency",
    "items", "as", "max_iterations", "message", "ignore_error",
]  # fmt: skip


def _load_and_validate(text: str, fmt: DocumentFormat) -> None:
    try:
        loaded = load_document(text, fmt=fmt)
        validate_document(loaded, known_tools=["search_flights", "book"])
    except DynamicToolsError as error:
        assert error.message


@st.composite
def xml_elements(draw: st.DrawFn, depth: int = 0) -> str:
    """An XML element over the format's tags and attributes."""
    tag = draw(st.sampled_from(XML_TAGS))
    names = draw(st.lists(st.sampled_from(XML_ATTRS), max_size=4, unique=True))
    values = st.one_of(st.sampled_from(WORDS), st.text(max_size=8))
    attrs = "".join(f" {n}={quoteattr(draw(values))}" for n in names)
    children = ""
    if depth < 5:
        children = "".join(draw(st.lists(xml_elements(depth + 1), max_size=3 if depth < 3 else 1)))
    return f"<{tag}{attrs}>{children}</{tag}>"


@FUZZ
@given(text=st.text(max_size=300), fmt=st.sampled_from(["yaml", "json", "xml"]))
@example(text="workflows: {w: {graph: {a: {call: x}}}}\n" + "[" * 10_000, fmt="yaml")
@example(text="=", fmt="yaml")  # was: ConstructorError (a tag with no constructor)
@example(text="{[1]: 2}", fmt="yaml")  # was: ConstructorError (an unhashable key)
@example(text="date: 2026-02-30", fmt="yaml")  # was: ValueError (an impossible date)
@example(text="!!python/name:os.system x", fmt="yaml")
def test_random_text_loads_or_is_refused(text: str, fmt: DocumentFormat) -> None:
    _load_and_validate(text, fmt)


@FUZZ
@given(tree=trees(WORDS), fmt=st.sampled_from(["yaml", "json"]))
@example(tree={"workflows": {"w": {"graph": {"a": {"call": "book", "args": [1]}}}}}, fmt="json")
def test_documents_over_the_formats_words_load_or_are_refused(
    tree: Any, fmt: DocumentFormat
) -> None:
    text = json.dumps(tree) if fmt == "json" else yaml.safe_dump(tree)
    _load_and_validate(text, fmt)


@FUZZ
@given(body=xml_elements())
def test_xml_over_the_formats_words_loads_or_is_refused(body: str) -> None:
    _load_and_validate(body, "xml")


@FUZZ
@given(data=st.data(), fmt=st.sampled_from(["yaml", "json", "xml"]))
def test_the_examples_cut_and_repeated_load_or_are_refused(
    data: st.DataObject, fmt: DocumentFormat
) -> None:
    _load_and_validate(data.draw(mutated(TEXTS[fmt])), fmt)
