"""The expression language of ``when`` and ``items``: parsing, evaluation, errors, limits."""

from __future__ import annotations

import contextlib
import dataclasses
import random
from functools import partial
from typing import Any

import pytest

from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.expression_ast import Binary, Constant, Expression, Logical
from dynamic_tools.engine.expressions import (
    MAX_DEPTH,
    MAX_LENGTH,
    evaluate,
    parse_expression,
    references,
)
from dynamic_tools.engine.references import Reference, resolve_reference

SCOPE: dict[str, Any] = {
    "start_date": "2026-02-26",
    "num_days": 3,
    "availability": {"seats_available": 2},
    "sold_out": {"seats_available": 0},
    "discount_code": None,
    "code": "SPRING10",
    "items": [3, 1, 2],
    "names": ["ada", "grace"],
    "flight_results": [{"id": "FL-1", "price": 120}, {"id": "FL-2", "price": 99}],
    "n": 10,
    "half": 0.5,
    "flag": True,
    "text": "Hello",
    "when": "2026-02-26T10:00:00Z",
}


def run(text: str, **overrides: Any) -> Any:
    scope = {**SCOPE, **overrides}
    resolve = partial(resolve_reference, lookup=scope.__getitem__)
    return evaluate(parse_expression(text), resolve)


def fails(text: str, **overrides: Any) -> ExpressionError:
    with pytest.raises(ExpressionError) as caught:
        run(text, **overrides)
    return caught.value


# --- the designs' expressions ----------------------------------------------------------------


def test_seed_seats_available() -> None:
    assert run("$availability.seats_available > 0") is True
    assert run("$availability.seats_available > 0", availability={"seats_available": 0}) is False
    assert run("$sold_out.seats_available == 0") is True


def test_seed_discount_code_not_null() -> None:
    assert run("$discount_code != null") is False
    assert run("$discount_code != null", discount_code="SPRING10") is True


def test_seed_range_of_dates() -> None:
    text = "range($start_date, $start_date + $num_days days)"
    assert run(text) == ["2026-02-26", "2026-02-27", "2026-02-28"]
    assert run(text, start_date="2026-12-30", num_days=4) == [
        "2026-12-30",
        "2026-12-31",
        "2027-01-01",
        "2027-01-02",
    ]
    assert len(run(text, num_days=7)) == 7
    assert run(text, num_days=0) == []


# --- literals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("42", 42),
        ("3.25", 3.25),
        ("1e3", 1000.0),
        ("2.5E-1", 0.25),
        ("'single'", "single"),
        ('"double"', "double"),
        ("'it\\'s'", "it's"),
        ('"say \\"hi\\""', 'say "hi"'),
        ("'a\\nb\\tc\\\\d\\/e\\r'", "a\nb\tc\\d/e\r"),
        ("'\\u00e9t\\u00C9'", "étÉ"),
        ("'$not_a_reference'", "$not_a_reference"),
        ("''", ""),
        ("true", True),
        ("True", True),
        ("false", False),
        ("False", False),
        ("null", None),
        ("None", None),
        ("[]", []),
        ("[1, 'a', [true, null]]", [1, "a", [True, None]]),
        ("  \t\n 7 \n", 7),
    ],
)
def test_literals(text: str, expected: Any) -> None:
    result = run(text)
    assert result == expected
    assert type(result) is type(expected)


# --- operators and precedence ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),
        ("100 / 10 / 5", 2.0),
        ("7 / 2", 3.5),
        ("7 % 3", 1),
        ("-7 % 3", 2),
        ("2 * 3 % 4", 2),
        ("-2 * 3", -6),
        ("--2", 2),
        ("-(1 + 2)", -3),
        ("1 - -1", 2),
        ("$n * $half", 5.0),
        ("$n + 1 > 10", True),
        ("1 + 1 == 2", True),
        ("'ab' + 'cd'", "abcd"),
        ("[1] + [2, 3]", [1, 2, 3]),
        ("$items.length * 2", 6),
        ("0.1 + 0.2 > 0.3", True),
    ],
)
def test_arithmetic_and_precedence(text: str, expected: Any) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 == 1", True),
        ("1 == 1.0", True),
        ("1 != 2", True),
        ("1 < 2", True),
        ("2 <= 2", True),
        ("3 > 2", True),
        ("2 >= 3", False),
        ("'abc' < 'abd'", True),
        ("'b' > 'a'", True),
        ("null == null", True),
        ("null != 0", True),
        ("null == false", False),
        ("true == 1", False),
        ("false != 0", True),
        ("'1' == 1", False),
        ("[1, 2] == [1, 2]", True),
        ("[true] == [1]", False),
        ("$availability == $availability", True),
        ("$flight_results.0 != $flight_results.1", True),
        ("2 days > 36 hours", True),
        ("1 week == 7 days", True),
    ],
)
def test_comparisons(text: str, expected: bool) -> None:
    assert run(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true && false", False),
        ("true and true", True),
        ("false || true", True),
        ("false or false", False),
        ("!true", False),
        ("not false", True),
        ("!!1", True),
        ("1 && 'x'", True),
        ("0 || ''", False),
        ("[] || null", False),
        ("!$items", False),
        ("true || false && false", True),
        ("(true || false) && false", False),
        ("not 1 == 2", True),
        ("!$n > 5", False),
        ("not true and false", False),
        ("not (true and false)", True),
        ("$n > 5 && $n < 20 || $flag", True),
    ],
)
def test_logic_returns_booleans(text: str, expected: bool) -> None:
    assert run(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 in [1, 2]", True),
        ("5 in $items", False),
        ("5 not in $items", True),
        ("'ell' in $text", True),
        ("'id' in $flight_results.0", True),
        ("'grace' in $names && 'ada' in $names", True),
        ("true in [1]", False),
        ("null in [null]", True),
        ("'seats' in $sold_out", False),
    ],
)
def test_membership(text: str, expected: bool) -> None:
    assert run(text) is expected


def test_logic_short_circuits_and_skips_resolution() -> None:
    seen: list[str] = []

    def resolve(ref: Reference) -> Any:
        seen.append(ref.text)
        if ref.name == "missing":
            raise AssertionError("must not be resolved")
        return SCOPE[ref.name]

    assert evaluate(parse_expression("$discount_code != null && $missing.x > 0"), resolve) is False
    assert evaluate(parse_expression("$flag || $missing"), resolve) is True
    assert evaluate(parse_expression("false and $missing"), resolve) is False
    assert evaluate(parse_expression("true or $missing.deep.path"), resolve) is True
    assert "$missing" not in " ".join(seen)


def test_both_sides_resolve_when_needed() -> None:
    seen: list[str] = []

    def resolve(ref: Reference) -> Any:
        seen.append(ref.text)
        return SCOPE[ref.name]

    evaluate(parse_expression("$discount_code == null && $n > 1"), resolve)
    assert seen == ["$discount_code", "$n"]


# --- syntax errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("$a > )", 5, "unexpected ')'"),
        ("", 0, "empty expression"),
        ("   ", 0, "empty expression"),
        ("1 +", 3, "unexpected end of expression"),
        ("(1 + 2", 6, "expected ')' to close the '(' at position 0, found end of expression"),
        ("[1, 2", 5, "expected ',' or ']'"),
        ("[1 2]", 3, "expected ',' or ']', found '2'"),
        ("len(1 2)", 6, "expected ',' or ')'"),
        ("1 2", 2, "unexpected '2'"),
        ("1 = 2", 2, "use '==' to compare"),
        ("$a & $b", 3, "use '&&' or 'and'"),
        ("$a | $b", 3, "use '||' or 'or'"),
        ("1 < 2 < 3", 6, "comparisons cannot be chained"),
        ("1 == 1 != true", 7, "comparisons cannot be chained"),
        ("'open", 0, "unterminated string"),
        ("'bad \\q escape'", 5, "unknown escape '\\q'"),
        ("'\\u12'", 1, "four hex digits"),
        ("$", 0, "'$' must be followed by a name"),
        ("$1", 0, "'$' must be followed by a name"),
        ("$a.", 2, "unexpected '.'"),
        ("1.2.3", 3, "unexpected '.'"),
        ("#", 0, "unexpected '#'"),
        ("café", 3, "unexpected 'é'"),
        ("origin == 'AMS'", 0, "unknown name 'origin': references start with '$' ($origin)"),
        ("days", 0, "'days' must follow a number, as in '7 days'"),
        ("1 + and", 4, "unexpected 'and'"),
        ("$a == not $b", 6, "unexpected 'not'"),
        ("1e999", 0, "too large"),
        ("()", 1, "unexpected ')'"),
        ("[1,]", 3, "unexpected ']'"),
    ],
)
def test_syntax_errors_have_positions(text: str, position: int, fragment: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_expression(text, node_id="decide")
    error = caught.value
    assert error.position == position
    assert fragment in error.detail
    assert error.expression == text
    assert error.node_id == "decide"
    assert f"at position {position} in {text!r} (node 'decide')" in error.message


def test_the_message_format() -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_expression("$a > )")
    assert caught.value.message == "unexpected ')' at position 5 in '$a > )'"
    assert caught.value.code == "invalid_expression"


def test_non_string_expression() -> None:
    with pytest.raises(ExpressionError, match="must be a string, not a boolean"):
        parse_expression(True, node_id="n")  # type: ignore[arg-type]


# --- limits ----------------------------------------------------------------------------------


def test_length_limit() -> None:
    longest = "1" + " " * (MAX_LENGTH - 1)
    assert run(longest) == 1
    with pytest.raises(ExpressionError, match="2,001 characters long; the limit is 2,000"):
        parse_expression(longest + " ")


def test_depth_limit() -> None:
    assert run("-" * (MAX_DEPTH - 1) + "1") == -1
    with pytest.raises(ExpressionError, match="nests deeper than 50 levels"):
        parse_expression("-" * MAX_DEPTH + "1")
    assert run("(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)) == 1
    with pytest.raises(ExpressionError, match="nests deeper than 50 levels"):
        parse_expression("(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH)


def test_long_operator_chains_hit_the_depth_limit() -> None:
    assert run(" + ".join(["1"] * MAX_DEPTH)) == MAX_DEPTH
    with pytest.raises(ExpressionError, match="nests deeper"):
        parse_expression(" + ".join(["1"] * (MAX_DEPTH + 1)))


@pytest.mark.parametrize(
    "text",
    ["(" * 999 + "1" + ")" * 999, "!" * 1999 + "1", "[" * 1000, "-" * 1999 + "1", "len(" * 400],
)
def test_pathological_nesting_fails_cleanly(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse_expression(text)


# --- parse once, immutable tree, references --------------------------------------------------


def test_parse_is_cached_and_the_tree_is_immutable() -> None:
    expr = parse_expression("$n + 1 > 2")
    assert parse_expression("$n + 1 > 2") is expr
    assert isinstance(expr, Expression)
    assert isinstance(expr.root, Binary)
    with pytest.raises(dataclasses.FrozenInstanceError):
        expr.root.op = "<"  # type: ignore[misc]
    assert run("$n + 1 > 2") is True
    assert evaluate(expr, lambda ref: 0) is False


def test_tree_shape_follows_precedence() -> None:
    root = parse_expression("true || false && 1 < 2").root
    assert isinstance(root, Logical) and root.op == "or"
    assert isinstance(root.right, Logical) and root.right.op == "and"
    assert isinstance(root.right.right, Binary) and root.right.right.op == "<"
    assert root.left == Constant(True, 0)


def test_references_lists_every_reference_in_order() -> None:
    text = "range($start_date, $start_date + $num_days days)"
    found = references(parse_expression(text))
    assert [ref.text for ref in found] == ["$start_date", "$start_date", "$num_days"]
    assert [text[ref.start : ref.end] for ref in found] == [ref.text for ref in found]
    deep = references(parse_expression("$b.0.x > 1 || len([$a, $c.length]) > 0"))
    assert [(ref.name, ref.path) for ref in deep] == [
        ("b", (0, "x")),
        ("a", ()),
        ("c", ("length",)),
    ]
    assert references(parse_expression("1 + 1")) == []


# --- robustness ------------------------------------------------------------------------------

_PIECES = [
    "1", "0", "2.5", "'a'", "'2026-02-26'", "$n", "$items", "$discount_code", "$start_date",
    "$availability.seats_available", "$missing", "true", "null", "+", "-", "*", "/", "%",
    "==", "!=", "<", ">=", "&&", "||", "!", "not", "and", "in", "(", ")", "[", "]", ",",
    "days", "hours", "len(", "range(", "min(", "date(", "str(", "=", "$", "'",
]  # fmt: skip


def test_random_inputs_only_raise_the_project_errors() -> None:
    generator = random.Random(20260226)
    parsed = 0
    for _ in range(3000):
        text = " ".join(generator.choice(_PIECES) for _ in range(generator.randint(1, 9)))
        try:
            expr = parse_expression(text)
        except ExpressionError:
            continue
        parsed += 1
        with contextlib.suppress(ExpressionError, UnresolvedReferenceError):
            run(expr.text)
    assert parsed > 100
