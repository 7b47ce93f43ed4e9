"""The planner fills a workflow's inputs from the goal's words, with no LLM (planning/fill.py),
and what the goal names breaks ties between workflows that contain the same goal terms."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.planning import (
    WorkflowSummary,
    fill_params,
    goal_values,
    plan_goal,
    summarize_workflow,
)
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES

SEED_GOAL = "Book me a flight from NYC to Paris next week"
TODAY = date(2026, 2, 19)  # a Thursday; the designs infer 2026-02-26 from "next week"
BOOK_FLIGHT = {
    "origin": {"type": "string", "required": True, "example": "AMS"},
    "destination": {"type": "string", "required": True, "example": "BCN"},
    "date": {"type": "string", "required": True, "format": "date"},
    "passenger": {"type": "string", "required": True},
}


@pytest.fixture(scope="module")
def tools() -> list[ToolConfig]:
    registry = ToolRegistry(EXAMPLES / "tools", variables={"PUBLIC_BASE_URL": "http://127.0.0.1:1"})
    assert registry.reload() == []
    return registry.all()


@pytest.fixture(scope="module")
def workflows() -> list[WorkflowSummary]:
    out = []
    for name in ["travel.yaml", "cancel_trip.xml", "waitlist_check.json"]:
        text = (EXAMPLES / "workflows" / name).read_text()
        document = load_document(text, name=name).document
        out += [summarize_workflow(wid, wf) for wid, wf in document.workflows.items()]
    return out


def fill(goal: str, params: dict[str, Any], today: date = TODAY) -> dict[str, Any]:
    return fill_params("w_x", params, goal_values(goal, today=today), goal).to_dict()


def values(filled: dict[str, Any]) -> dict[str, Any]:
    return {name: entry["value"] for name, entry in filled["filled"].items()}


def test_the_seed_goal_fills_origin_destination_and_date() -> None:
    out = fill(SEED_GOAL, BOOK_FLIGHT)
    assert values(out) == {"origin": "NYC", "destination": "Paris", "date": "2026-02-26"}
    assert out["filled"]["date"] == {"value": "2026-02-26", "source": "goal", "text": "next week"}
    assert out["filled"]["origin"]["source"] == "goal"
    assert out["missing"] == ["passenger"] and out["ready"] is False
    assert out["call"] == {
        "name": "w_x",
        "arguments": {"origin": "NYC", "destination": "Paris", "date": "2026-02-26"},
    }
    # Paris is passed as written (no city table); the example says a code is usual
    assert any("destination: 'Paris'" in n and "'BCN' is a code" for n in out["notes"])


def test_a_name_after_for_completes_the_call() -> None:
    out = fill(SEED_GOAL + " for John Smith", BOOK_FLIGHT)
    assert out["ready"] is True and out["missing"] == []
    assert out["call"]["arguments"]["passenger"] == "John Smith"


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("on 2026-12-03", "2026-12-03"),
        ("tomorrow", "2026-02-20"),
        ("today", "2026-02-19"),
        ("the day after tomorrow", "2026-02-21"),
        ("next week", "2026-02-26"),
        ("in 3 days", "2026-02-22"),
        ("in two weeks", "2026-03-05"),
        ("next Friday", "2026-02-20"),
        ("on Thursday", "2026-02-26"),  # the next one: today is a Thursday
        ("on 3 December", "2026-12-03"),
        ("on December 3rd", "2026-12-03"),
        ("on January 5", "2027-01-05"),  # past this year: next year's
    ],
)
def test_dates_are_resolved_relative_to_today(said: str, expected: str) -> None:
    found = [v for v in goal_values(f"fly from AMS to BCN {said}", today=TODAY) if v.kind == "date"]
    assert [v.value for v in found] == [expected]
    assert values(fill(f"fly from AMS to BCN {said}", BOOK_FLIGHT))["date"] == expected


def test_codes_names_and_lower_case_places() -> None:
    assert values(fill("book a flight from AMS to BCN", BOOK_FLIGHT)) == {
        "origin": "AMS",
        "destination": "BCN",
    }
    assert values(fill("a flight AMS to BCN", BOOK_FLIGHT)) == {
        "origin": "AMS",
        "destination": "BCN",
    }
    assert values(fill("cheap AMS BCN flights", BOOK_FLIGHT)) == {
        "origin": "AMS",
        "destination": "BCN",
    }
    assert values(fill("from New York to Los Angeles", BOOK_FLIGHT)) == {
        "origin": "New York",
        "destination": "Los Angeles",
    }
    assert values(fill("from amsterdam to barcelona", BOOK_FLIGHT)) == {
        "origin": "amsterdam",
        "destination": "barcelona",
    }


def test_verbs_after_to_are_not_places() -> None:
    assert values(fill("I want to fly to Paris from amsterdam", BOOK_FLIGHT)) == {
        "origin": "amsterdam",
        "destination": "Paris",
    }
    assert values(fill("I need to book something nice", BOOK_FLIGHT)) == {}
    assert values(fill("NYC to Paris, please", BOOK_FLIGHT)) == {
        "origin": "NYC",
        "destination": "Paris",
    }


def test_roles_come_from_the_description_when_the_name_says_nothing() -> None:
    params = {
        "a": {"type": "string", "required": True, "description": "Departure airport"},
        "b": {"type": "string", "required": True, "description": "Arrival airport"},
        "c": {"type": "string", "required": False, "description": "The hotel's city"},
    }
    assert values(fill("from Rome to Oslo", params)) == {"a": "Rome", "b": "Oslo", "c": "Oslo"}
    assert values(fill("a room in Oslo", params)) == {"b": "Oslo", "c": "Oslo"}


def test_enums_numbers_and_defaults() -> None:
    params = {
        "origin": {"type": "string", "required": True, "enum": ["AMS", "BCN", "CDG"]},
        "destination": {"type": "string", "required": True, "enum": ["AMS", "BCN", "CDG"]},
        "passengers": {"type": "integer", "required": True},
        "cabin": {
            "type": "string",
            "required": False,
            "enum": ["economy", "premium economy", "business"],
        },
        "num_days": {"type": "integer", "required": False, "default": 7},
    }
    out = fill("fly 2 passengers from AMS to Paris in business", params)
    assert values(out) == {"origin": "AMS", "passengers": 2, "cabin": "business", "num_days": 7}
    assert out["filled"]["passengers"] == {"value": 2, "source": "goal", "text": "2 passengers"}
    assert out["filled"]["num_days"] == {"value": 7, "source": "default"}
    assert out["missing"] == ["destination"]  # Paris is not one of the enum's codes: no guess
    assert values(fill("three passengers in premium economy for 5 days", params)) == {
        "passengers": 3,
        "cabin": "premium economy",
        "num_days": 5,
    }


def test_check_in_and_check_out_take_the_dates_in_order() -> None:
    params = {
        "city": {"type": "string", "required": True},
        "checkin": {"type": "string", "required": True, "format": "date"},
        "checkout": {"type": "string", "required": True, "format": "date"},
        "guest": {"type": "string", "required": True},
    }
    out = fill("a hotel in Barcelona from 2026-12-03 to 2026-12-06 for Ann", params)
    assert values(out) == {
        "city": "Barcelona",
        "checkin": "2026-12-03",
        "checkout": "2026-12-06",
        "guest": "Ann",
    }
    assert out["ready"] is True


# --- the planner ---------------------------------------------------------------------------
def test_the_seed_goal_picks_book_flight_clearly_ahead_of_cancel_trip(
    tools: list[ToolConfig], workflows: list[WorkflowSummary]
) -> None:
    plan = plan_goal(SEED_GOAL, tools, workflows, today=TODAY)
    data = plan.to_dict()
    assert data["kind"] == "workflow" and data["workflow"]["id"] == "book_flight"
    assert data["goal_terms"] == ["book", "flight"]  # "next week" is a value, not a term
    scores = {a["id"]: a["score"] for a in data["alternatives"]}
    assert data["score"] - scores["cancel_trip"] >= 0.15  # was 0.673 against 0.667
    assert all(data["score"] > s for s in scores.values())
    assert {n: f["value"] for n, f in data["filled"].items()} == {
        "origin": "NYC",
        "destination": "Paris",
        "date": "2026-02-26",
    }
    assert data["missing"] == ["passenger"] and data["call"]["name"] == "w_book_flight"
    assert data["no_fit"] is False and data["draft"] is None
    assert "Still needed: passenger." in plan.summary
    alternatives = {a["id"]: a for a in data["alternatives"]}
    assert alternatives["book_trip"]["filled"]["origin"]["value"] == "NYC"  # every candidate
    assert alternatives["cancel_trip"]["missing"] == ["flight_booking_id", "hotel_booking_id"]


def test_a_ready_call_when_the_goal_gives_everything(
    tools: list[ToolConfig], workflows: list[WorkflowSummary]
) -> None:
    goal = "find the cheapest flight from AMS to BCN starting tomorrow"
    data = plan_goal(goal, tools, workflows, today=TODAY).to_dict()
    assert data["workflow"]["id"] == "find_cheapest_across_dates"
    assert data["ready"] is True
    assert data["call"] == {
        "name": "w_find_cheapest_across_dates",
        "arguments": {
            "origin": "AMS",
            "destination": "BCN",
            "start_date": "2026-02-20",
            "num_days": 7,
        },
    }


def test_ties_are_broken_by_what_the_goal_names(
    tools: list[ToolConfig], workflows: list[WorkflowSummary]
) -> None:
    # both contain "cancel" and "trip"/"booking" words; the goal's verb and nouns name one
    cancel = plan_goal("cancel my trip", tools, workflows, today=TODAY).to_dict()
    assert cancel["workflow"]["id"] == "cancel_trip"
    assert all(cancel["score"] - a["score"] >= 0.15 for a in cancel["alternatives"])


def test_no_workflow_fits(tools: list[ToolConfig], workflows: list[WorkflowSummary]) -> None:
    assert plan_goal("send an invoice to ACME", tools, workflows).no_fit
    assert plan_goal("anything at all", tools, []).no_fit
    assert not plan_goal("search flights", tools, workflows).no_fit  # a tool order, workflows fit
