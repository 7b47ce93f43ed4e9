"""Checking values against param specs: defaults, every bad field named."""

from __future__ import annotations

import pytest

from dynamic_tools.engine.models import ParamSpec
from dynamic_tools.engine.params import check_values
from dynamic_tools.errors import InvalidInputError

SPECS = {
    "origin": ParamSpec(type="string", required=True),
    "seats": ParamSpec(type="integer", required=False, default=1),
    "cabin": ParamSpec(type="string", required=False, enum=["economy", "business"]),
    "flexible": ParamSpec(type="boolean", required=False),
}


def test_defaults_are_applied_and_unset_optionals_are_null() -> None:
    # An optional param not given reads as null (a call argument of null is not sent), so a
    # workflow that passes it on does not fail for want of it.
    assert check_values(SPECS, {"origin": "AMS"}) == {
        "origin": "AMS",
        "seats": 1,
        "cabin": None,
        "flexible": None,
    }


def test_every_problem_is_one_violation_naming_its_field() -> None:
    with pytest.raises(InvalidInputError) as refused:
        check_values(SPECS, {"seats": "two", "cabin": "first", "extra": 1})
    by_path = {v["path"]: v["rule"] for v in refused.value.violations}
    assert by_path["params.origin"] == "required"
    assert by_path["params.extra"] == "unknown"
    assert by_path["params.seats"] == "type"
    assert "params.cabin" in by_path
    assert refused.value.message.startswith("invalid params: ")


def test_the_prefix_names_where_the_values_come_from() -> None:
    with pytest.raises(InvalidInputError) as refused:
        check_values({"ok": ParamSpec(type="boolean", required=True)}, {"ok": "yes"}, what="values")
    assert [v["path"] for v in refused.value.violations] == ["values.ok"]


def test_a_null_value_counts_as_missing() -> None:
    values = check_values(SPECS, {"origin": "AMS", "seats": None})
    assert values == {"origin": "AMS", "seats": 1, "cabin": None, "flexible": None}
