"""Aliases: the design's argument names folded into the product's."""

from __future__ import annotations

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.aliases import Alias, alias_property, apply_aliases

VERSION = Alias("version", "expected_version")
BY_TITLE = Alias("catalog_title", "catalog", lambda title: title.lower().replace(" ", "-"))
CATALOG_ID = Alias("catalog_id", "catalog")


def test_an_alias_alone_works_like_the_product_name() -> None:
    assert apply_aliases("t", {"version": "v1", "x": 1}, [VERSION]) == {
        "expected_version": "v1",
        "x": 1,
    }
    assert apply_aliases("t", {"catalog_title": "Pet Store"}, [BY_TITLE]) == {
        "catalog": "pet-store"
    }


def test_agreeing_names_are_fine_and_disagreeing_ones_name_both() -> None:
    same = {"version": "v1", "expected_version": "v1"}
    assert apply_aliases("t", same, [VERSION]) == {"expected_version": "v1"}
    agreeing = {"catalog_id": "pet-store", "catalog_title": "Pet Store"}
    assert apply_aliases("t", agreeing, [CATALOG_ID, BY_TITLE]) == {"catalog": "pet-store"}
    with pytest.raises(InvalidInputError) as raised:
        apply_aliases("workflow.save", {"version": "v1", "expected_version": "v2"}, [VERSION])
    violation = raised.value.violations[0]
    assert violation["path"] == "version" and violation["rule"] == "alias"
    assert violation["expected"] == "v2" and violation["actual"] == "v1"
    assert "'version' and 'expected_version'" in raised.value.message
    with pytest.raises(InvalidInputError) as two_aliases:
        apply_aliases(
            "t", {"catalog_id": "cats", "catalog_title": "Pet Store"}, [CATALOG_ID, BY_TITLE]
        )
    assert "'catalog_title' and 'catalog_id'" in two_aliases.value.message


def test_one_of_a_group_is_required() -> None:
    assert apply_aliases("t", {"catalog_id": "x"}, [CATALOG_ID], one_of=[("catalog", "catalog_id")])
    with pytest.raises(InvalidInputError) as raised:
        apply_aliases("catalog.remove", {}, [CATALOG_ID], one_of=[("catalog", "catalog_id")])
    assert raised.value.violations[0]["expected"] == ["catalog", "catalog_id"]
    assert "'catalog' or 'catalog_id'" in raised.value.message


def test_the_input_schema_property_says_what_it_stands_for() -> None:
    prop = alias_property(VERSION, {"type": "string", "description": "the lock", "default": "x"})
    assert prop["type"] == "string" and "default" not in prop
    assert "'expected_version'" in prop["description"]
