"""Sequence recipes as data: how a trace is parameterised, how references and question patterns
resolve (``mcp/recipe_sequences.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.recipe_sequences import (
    draft_sequence,
    match_question,
    question_pattern,
    resolve,
    sequence_hash,
)
from dynamic_tools.selection.query_agent import QueryOutcome, QueryStep
from dynamic_tools.tools.models import ToolConfig

FLIGHTS = [
    {"id": "FL-1", "price": 120.0, "seats": 3},
    {"id": "FL-2", "price": 89.5, "seats": 9},
    {"id": "FL-3", "price": 140.0, "seats": 0},
]


def tool(name: str, path: str, **parameters: Any) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": name,
            "api": {"method": "GET", "base_url": "https://api.example.com", "path": path},
            "parameters": parameters,
        }
    )


SEARCH = tool(
    "search",
    "/flights",
    origin={"in": "query", "type": "string", "required": True},
    date={"in": "query", "type": "string", "required": True},
    passengers={"in": "query", "type": "integer"},
    cabin={"in": "query", "type": "string"},
)
DETAILS = tool("details", "/flights/{id}", id={"in": "path", "type": "string", "required": True})
CONFIGS = {"search": SEARCH, "details": DETAILS}


def trace(*steps: tuple[str, dict[str, Any], Any]) -> QueryOutcome:
    outcome = QueryOutcome()
    for index, (name, arguments, body) in enumerate(steps):
        outcome.steps.append(QueryStep(index, name, arguments, "ok", rows=1, body=body))
    return outcome


def test_question_values_become_parameters_and_answer_values_references() -> None:
    outcome = trace(
        (
            "search",
            {"origin": "AMS", "date": "2026-12-01", "passengers": 2, "cabin": "eco"},
            FLIGHTS,
        ),
        ("details", {"id": "FL-2"}, {"id": "FL-2", "seats": 9}),
    )
    draft = draft_sequence("cheapest from AMS on 2026-12-01 for 2", outcome, CONFIGS)
    assert draft is not None
    search, details = draft.fixed["$steps"]
    assert search["arguments"] == {
        "origin": {"$param": "origin"},
        "date": {"$param": "date"},
        "passengers": {"$param": "passengers"},  # optional, but in the question
        "cabin": "eco",  # optional and chosen by the model: fixed
    }
    # FL-2 came from step 0: the row with the unique smallest price (not "row 1")
    assert details["arguments"] == {
        "id": {"$ref": {"step": 0, "row": {"min": "price"}, "field": "id"}}
    }
    assert draft.parameters["passengers"]["required"] is False
    assert draft.parameters["origin"]["examples"] == ["AMS"]
    assert draft.name == "r_search_then_details_by_date_origin_passengers"


def test_a_row_that_nothing_singles_out_is_referenced_by_position() -> None:
    same = [{"id": "A", "price": 1}, {"id": "B", "price": 2}, {"id": "C", "price": 3}]
    outcome = trace(("search", {"origin": "AMS", "date": "d"}, same), ("details", {"id": "B"}, {}))
    draft = draft_sequence("middle one from AMS on d", outcome, CONFIGS)
    assert draft is not None
    assert draft.fixed["$steps"][1]["arguments"]["id"] == {
        "$ref": {"step": 0, "row": 1, "field": "id"}
    }


def test_references_resolve_against_the_new_answers() -> None:
    done = [QueryStep(0, "search", {}, "ok", body={"data": {"flights": FLIGHTS}})]
    template = {"id": {"$ref": {"step": 0, "row": {"max": "seats"}, "field": "id"}}, "x": 1}
    assert resolve(template, {}, done) == {"id": "FL-2", "x": 1}
    by_min = {"$ref": {"step": 0, "row": {"min": "price"}, "field": "id"}}
    assert resolve(by_min, {}, done) == "FL-2"
    assert resolve({"$param": "origin"}, {"origin": "LIS"}, done) == "LIS"
    assert resolve({"a": {"$param": "missing"}}, {}, done) == {}  # an optional left out
    with pytest.raises(InvalidInputError, match="row 7 is missing"):
        resolve({"$ref": {"step": 0, "row": 7, "field": "id"}}, {}, done)


def test_a_question_pattern_matches_the_same_question_with_other_values() -> None:
    parameters = {
        "origin": {"type": "string", "examples": ["AMS"]},
        "date": {"type": "string", "examples": ["2026-12-01"]},
        "passengers": {"type": "integer", "examples": [2]},
    }
    pattern = question_pattern("2 seats from AMS on 2026-12-01, cheapest?", parameters)
    assert pattern is not None
    assert match_question(pattern, "3 seats  from lis on 2027-01-02, cheapest?", parameters) == {
        "origin": "lis",
        "date": "2027-01-02",
        "passengers": 3,
    }
    assert match_question(pattern, "x seats from LIS on 2027-01-02, cheapest?", parameters) is None
    assert match_question(pattern, "seats from LIS on 2027-01-02?", parameters) is None
    # a value the question does not hold (it came from elsewhere): no pattern
    assert question_pattern("cheapest please", {"origin": {"examples": ["AMS"]}}) is None


def test_the_hash_covers_every_operation() -> None:
    changed = tool(
        "details",
        "/flights/{id}",
        id={"in": "path", "type": "string", "required": True, "minLength": 2},
    )
    assert sequence_hash([SEARCH, DETAILS]) != sequence_hash([SEARCH, changed])
    assert sequence_hash([SEARCH, DETAILS]) == sequence_hash([SEARCH, DETAILS])
