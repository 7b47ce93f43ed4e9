"""Fuzzing the expression language: any text parses or gives ExpressionError; evaluating a
parsed expression against any values gives a value or a structured error, never a crash.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from dynamic_tools.engine.expressions import evaluate, parse_expression
from dynamic_tools.errors import DynamicToolsError
from tests.support.fuzz import FUZZ, scalars, trees

TOKENS = [
    "$a", "$b", "$a.b", "$a.0", "$a.length", "$b.x.y", "1", "0", "-1", "2.5", "1e308", "1e-9",
    "99999999999999999999", "'x'", '"2026-12-01"', '"2026-12-01T10:00:00Z"', "true", "false",
    "null", "None", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "and", "or", "not",
    "in", "not in", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", "days", "hours",
    "minutes", "weeks", "seconds", "range(", "len(", "min(", "max(", "lower(", "upper(",
    "contains(", "date(", "abs(", "round(", "sum(", "int(", "float(", "str(", "startswith(",
    "endswith(", "nope(",
]  # fmt: skip
VALUES = ["1", "2026-12-01", "2026-12-01T10:00:00Z", "x", "", "-", "1e999", "NaN"]


@st.composite
def token_strings(draw: st.DrawFn) -> str:
    """Expressions made of the language's tokens, in any order."""
    parts = draw(st.lists(st.sampled_from(TOKENS), max_size=14))
    return " ".join(parts)


def _parse_and_evaluate(text: str, values: dict[str, Any]) -> None:
    try:
        expression = parse_expression(text, node_id="n")
    except DynamicToolsError as error:
        assert error.message
        return
    try:
        evaluate(expression, lambda ref: values[ref.name], node_id="n")
    except DynamicToolsError as error:
        assert error.message
    except KeyError:
        pass  # the test's own resolver: a name it was not given


@FUZZ
@given(text=st.text(max_size=80))
@example(text="(" * 2_000)
@example(text="!" * 1_999 + "1")
def test_any_text_parses_or_is_refused(text: str) -> None:
    _parse_and_evaluate(text, {})


@FUZZ
@given(
    text=token_strings(),
    a=st.one_of(trees(VALUES, max_leaves=8), scalars(VALUES)),
    b=st.one_of(trees(VALUES, max_leaves=8), scalars(VALUES)),
)
@example(text="range($a, $a + $b days)", a="2026-12-01", b=10**12)
@example(text="$a * $b", a="x", b=10**9)
@example(text="$a days", a=1e308, b=None)
def test_expressions_of_the_languages_tokens_evaluate_or_report(text: str, a: Any, b: Any) -> None:
    _parse_and_evaluate(text, {"a": a, "b": b})
