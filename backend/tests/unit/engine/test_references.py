"""References: finding, parsing, resolving and rendering ``$name.path``."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest

from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.references import (
    Reference,
    describe,
    find_references,
    parse_reference,
    render,
    resolve_path,
    resolve_reference,
    to_text,
    type_name,
)
from dynamic_tools.errors import DynamicToolsError, InvalidInputError

SCOPE: dict[str, Any] = {
    "origin": "AMS",
    "destination": "BCN",
    "checkin": "2026-03-01",
    "checkout": "2026-03-05",
    "passenger": "Ada Lovelace",
    "cart_id": "C-42",
    "discount_code": None,
    "num_days": 7,
    "ratio": 0.5,
    "flag": True,
    "flight_results": [{"id": "FL-1", "price": 120}, {"id": "FL-2", "price": 99}],
    "availability": {"seats_available": 3},
    "options": [{"id": "A"}, {"id": "B"}],
    "present_options": {"selected_flight_id": "FL-2"},
    "stats": {"length": 99, "count": 2},
    "sparse": {"007": "bond"},
}


def lookup(name: str) -> Any:
    return SCOPE[name]


# --- find_references -------------------------------------------------------------------------


def test_find_references_reads_names_paths_and_offsets() -> None:
    text = "Get status for flight $flight_number"
    [ref] = find_references(text)
    assert ref == Reference("flight_number", (), "$flight_number", 22, 36)
    assert text[ref.start : ref.end] == ref.text


def test_numeric_segments_are_ints_and_names_stay_strings() -> None:
    [ref] = find_references("$flight_results.0.id")
    assert ref.name == "flight_results"
    assert ref.path == (0, "id")
    [ref] = find_references("$a.12.b_2.007")
    assert ref.path == (12, "b_2", "007")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Found $options.length flights.", ["$options.length"]),
        ("/carts/$cart_id/discount", ["$cart_id"]),
        ("ends with $cart_id.", ["$cart_id"]),
        ("$a.b.", ["$a.b"]),
        ("$a$b", ["$a", "$b"]),
        (
            "Book hotel in $destination from $checkin to $checkout for $passenger",
            ["$destination", "$checkin", "$checkout", "$passenger"],
        ),
        ("no references here", []),
        ("costs $5 or $ 6", []),
        ("$$escaped and $$$real", ["$real"]),
        ("$$", []),
        ("$_private.x", ["$_private.x"]),
        ("email a@b.$c-d", ["$c"]),
    ],
)
def test_find_references_cases(text: str, expected: list[str]) -> None:
    assert [ref.text for ref in find_references(text)] == expected


def test_find_references_offsets_skip_escapes() -> None:
    text = "$$x $y"
    [ref] = find_references(text)
    assert (ref.start, ref.end) == (4, 6)


# --- parse_reference -------------------------------------------------------------------------


def test_parse_reference_whole_string() -> None:
    ref = parse_reference("$present_options.selected_flight_id")
    assert ref == Reference(
        "present_options", ("selected_flight_id",), "$present_options.selected_flight_id", 0, 35
    )


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("origin", 0),
        ("", 0),
        ("$", 1),
        ("$1abc", 1),
        ("$a.", 2),
        ("$a b", 2),
        ("$a.b-c", 4),
    ],
)
def test_parse_reference_rejects_with_position(text: str, position: int) -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_reference(text)
    assert caught.value.position == position
    assert caught.value.expression == text


# --- resolve_path ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$flight_results.0.id", "FL-1"),
        ("$flight_results.1.price", 99),
        ("$availability.seats_available", 3),
        ("$present_options.selected_flight_id", "FL-2"),
        ("$options.length", 2),
        ("$passenger.length", 12),
        ("$availability.length", 1),
        ("$stats.length", 99),
        ("$sparse.007", "bond"),
        ("$flight_results", SCOPE["flight_results"]),
        ("$discount_code", None),
    ],
)
def test_resolve_path(text: str, expected: Any) -> None:
    ref = parse_reference(text)
    assert resolve_path(SCOPE[ref.name], ref) == expected


def test_numeric_segment_on_object_uses_the_key() -> None:
    ref = parse_reference("$m.0")
    assert resolve_path({"0": "zero"}, ref) == "zero"


@pytest.mark.parametrize(
    ("text", "segment", "fragment"),
    [
        ("$flight_results.3.id", 3, "index 3 out of range for a list of 2"),
        ("$availability.seats", "seats", "no key 'seats' in an object with keys 'seats_available'"),
        ("$flight_results.first", "first", "'first' used on a list of 2"),
        ("$num_days.value", "value", "'value' used on a number (7)"),
        ("$discount_code.code", "code", "'code' used on null"),
        ("$origin.0", 0, "0 used on a string ('AMS')"),
        ("$flag.x", "x", "'x' used on a boolean (true)"),
        ("$flight_results.0.seat.row", "seat", "no key 'seat'"),
    ],
)
def test_resolve_path_errors_name_reference_segment_and_node(
    text: str, segment: str | int, fragment: str
) -> None:
    ref = parse_reference(text)
    with pytest.raises(UnresolvedReferenceError) as caught:
        resolve_path(SCOPE[ref.name], ref, node_id="check")
    error = caught.value
    assert error.reference == text
    assert error.segment == segment
    assert error.node_id == "check"
    assert fragment in error.message
    assert text in error.message
    assert "'check'" in error.message
    assert error.to_dict()["error_code"] == "unresolved_reference"


def test_object_key_listing_is_shortened() -> None:
    big = {f"k{i}": i for i in range(20)}
    with pytest.raises(UnresolvedReferenceError, match=r"'k7', \.\.\."):
        resolve_path(big, parse_reference("$big.missing"))


# --- resolve_reference -----------------------------------------------------------------------


def test_resolve_reference_unknown_name() -> None:
    with pytest.raises(UnresolvedReferenceError) as caught:
        resolve_reference(parse_reference("$nope.x"), lookup, node_id="n1")
    assert caught.value.reference == "$nope.x"
    assert caught.value.segment is None
    assert caught.value.node_id == "n1"
    assert "'nope'" in caught.value.message


def test_resolve_reference_adds_node_to_lookup_errors() -> None:
    def failing(name: str) -> Any:
        raise UnresolvedReferenceError("not answered yet", reference=f"${name}")

    with pytest.raises(UnresolvedReferenceError) as caught:
        resolve_reference(parse_reference("$ask.x"), failing, node_id="book")
    assert caught.value.node_id == "book"
    assert caught.value.detail == "not answered yet"


# --- render ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("$num_days", 7),
        ("$ratio", 0.5),
        ("$flag", True),
        ("$discount_code", None),
        ("$flight_results", SCOPE["flight_results"]),
        ("$availability", {"seats_available": 3}),
        ("$flight_results.0", {"id": "FL-1", "price": 120}),
        ("$options.length", 2),
    ],
)
def test_whole_value_reference_keeps_its_type(template: str, expected: Any) -> None:
    result = render(template, lookup, node_id="n")
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("/carts/$cart_id/discount", "/carts/C-42/discount"),
        (
            "Book hotel in $destination from $checkin to $checkout for $passenger",
            "Book hotel in BCN from 2026-03-01 to 2026-03-05 for Ada Lovelace",
        ),
        ("Found $options.length flights. Which one?", "Found 2 flights. Which one?"),
        ("Get status for flight $flight_results.0.id", "Get status for flight FL-1"),
        ("days=$num_days", "days=7"),
        ("ratio $ratio", "ratio 0.5"),
        ("code=$discount_code", "code=null"),
        ("flag=$flag", "flag=true"),
        ("seats: $availability", 'seats: {"seats_available":3}'),
        ("ids: $options", 'ids: [{"id":"A"},{"id":"B"}]'),
        (" $num_days", " 7"),
        ("$num_days$num_days", "77"),
        ("price in $$: $ratio", "price in $: 0.5"),
        ("$$origin", "$origin"),
        ("costs $5", "costs $5"),
        ("plain text", "plain text"),
        ("", ""),
    ],
)
def test_interpolation(template: str, expected: str) -> None:
    assert render(template, lookup, node_id="n") == expected


def test_render_walks_documents_and_leaves_keys_and_scalars() -> None:
    args = {
        "method": "POST",
        "path": "/carts/$cart_id/discount",
        "body": {"code": "$discount_code", "$origin": ["$num_days", 3, None, False]},
        "retries": 2,
    }
    original = copy.deepcopy(args)
    assert render(args, lookup, node_id="apply_code") == {
        "method": "POST",
        "path": "/carts/C-42/discount",
        "body": {"code": None, "$origin": [7, 3, None, False]},
        "retries": 2,
    }
    assert args == original


def test_render_unknown_name_names_reference_and_node() -> None:
    with pytest.raises(UnresolvedReferenceError) as caught:
        render({"body": {"id": "/x/$missing.id/y"}}, lookup, node_id="confirm")
    assert caught.value.reference == "$missing.id"
    assert caught.value.node_id == "confirm"
    assert "confirm" in str(caught.value)


def test_render_never_returns_silent_none_for_a_bad_path() -> None:
    with pytest.raises(UnresolvedReferenceError, match="index 5 out of range for a list of 2"):
        render("$flight_results.5.id", lookup, node_id="check")


# --- helpers and error classes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("s", "s"),
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (2.5, "2.5"),
        ([1, "a"], '[1,"a"]'),
        ({"é": 1}, '{"é":1}'),
    ],
)
def test_to_text(value: Any, text: str) -> None:
    assert to_text(value) == text


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (1, "number"),
        (1.5, "number"),
        ("x", "string"),
        ([], "list"),
        ({}, "object"),
        (timedelta(days=1), "duration"),
    ],
)
def test_type_name(value: Any, name: str) -> None:
    assert type_name(value) == name


def test_describe_shortens_long_values() -> None:
    assert describe("x" * 100).endswith("...)")
    assert describe({}) == "an empty object"
    assert describe(3) == "a number (3)"
    assert describe(timedelta(days=1)).startswith("a duration")


def test_error_classes_sit_in_the_tree() -> None:
    expression_error = ExpressionError("bad", expression="$a >", position=4)
    assert isinstance(expression_error, InvalidInputError)
    assert expression_error.to_dict()["error_code"] == "invalid_expression"
    assert expression_error.violations[0]["position"] == 4
    reference_error = UnresolvedReferenceError("gone", reference="$a")
    assert isinstance(reference_error, DynamicToolsError)
    assert not isinstance(reference_error, InvalidInputError)


def test_with_node_fills_in_once() -> None:
    error = ExpressionError("bad", expression="x", position=0)
    named = error.with_node("n1")
    assert named.node_id == "n1"
    assert "(node 'n1')" in named.message
    assert named.with_node("n2") is named
    assert error.with_node(None) is error
    reference_error = UnresolvedReferenceError("gone", reference="$a", segment="b")
    assert reference_error.with_node("n").segment == "b"


def test_long_expressions_are_shortened_in_the_message_only() -> None:
    text = "1 + " * 100 + "x"
    error = ExpressionError("bad", expression=text, position=len(text) - 1)
    assert error.expression == text
    assert len(error.message) < 200


def test_interpolating_a_value_nested_past_the_limit_names_the_reference() -> None:
    from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH

    deep: Any = 1
    for _ in range(MAX_VALUE_DEPTH * 20):  # 2,000 levels: json.dumps alone would recurse
        deep = [deep]
    with pytest.raises(UnresolvedReferenceError) as caught:
        render({"note": "got $v"}, {"v": deep}.__getitem__, node_id="n")
    assert caught.value.reference == "$v"
    assert f"too deep: its value is nested past {MAX_VALUE_DEPTH} levels" in caught.value.message
    assert render("$v", {"v": deep}.__getitem__, node_id="n") is deep  # taken whole: no walk
