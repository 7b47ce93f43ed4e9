"""What a session's documents bring, as the designs show them (docs/design-sources.md): the
orchestration plan's full specification by X-Workflow-URL (invalid workflows reported, never
dropped silently), a natural-language guide by X-Workflow-Resources, collisions reported, the
overview naming only tools that exist, the dependency graph resource, and the planner (its pick
scores best; `_plan` answers too)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.conftest import EXAMPLES, FIXTURES
from tests.support.mcp_client import mcp_client

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
SEED001 = (FIXTURES / "workflows" / "seeds" / "seed001_full.yaml").read_text()
GUIDE = """\
# Flights API — Workflow Guide

## Available Workflows

### 1. Book a Flight
Steps: search_flights → check_availability → create_booking → process_payment

## Rules
- Never call create_booking without check_availability first.
- process_payment is irreversible.
"""


def file_url(root: Path, name: str, text: str) -> str:
    (root / name).write_text(text)
    return f"file://{root / name}"


async def read(client: Any, uri: str) -> str:
    result = await client.read_resource(uri)
    return str(result.contents[0].text)


async def test_seed_001_spec_serves_the_valid_workflows_and_reports_the_others(
    server: str, travel_root: Path
) -> None:
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    headers = {"X-Workflow-URL": file_url(travel_root, "seed001.yaml", SEED001)}
    async with mcp_client(server, headers=headers, logging_callback=on_log) as client:
        await client.set_logging_level("warning")
        names = {t.name for t in (await client.list_tools()).tools}
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        problems = json.loads(await read(client, "dynamic-tools://session/problems"))
    assert {"w_book_flight", "w_find_cheapest_across_dates"} <= names
    left_out = {p["workflow"]: p for p in problems}
    assert set(left_out) == {"check_flight_status", "book_trip", "book_with_approval"}
    assert not {f"w_{w}" for w in left_out} & names
    assert left_out["check_flight_status"]["header"] == "X-Workflow-URL"
    rules = {v["rule"] for p in problems for v in p["violations"]}
    assert {"unknown_tool", "unknown_workflow", "missing_argument"} <= rules
    assert "dynamic-tools://session/problems" in uris
    logged = [m.data for m in received if m.data.get("event") == "session_documents"]
    assert logged and "X-Workflow-URL: book_trip" in logged[0]["left_out"]


async def test_a_markdown_guide_and_a_colliding_guide_are_served_and_reported(
    server: str, travel_root: Path
) -> None:
    travel = (EXAMPLES / "workflows" / "travel.yaml").read_text()
    guides = """\
domain: travel_booking
workflows:
  book_flight:
    description: A guide that has the id of a served workflow
    graph: {s: {call: search_flights, args: {origin: A, destination: B, date: "2026-12-01"}}}
  rebook:
    description: Rebook a cancelled flight (a guide only)
    graph: {s: {call: search_flights, args: {origin: A, destination: B, date: "2026-12-01"}}}
"""
    markdown = {
        "X-Workflow-URL": file_url(travel_root, "served.yaml", travel),
        "X-Workflow-Resources": file_url(travel_root, "guide.md", GUIDE),
    }
    colliding = {**markdown, "X-Workflow-Resources": file_url(travel_root, "g.yaml", guides)}
    async with mcp_client(server, headers=markdown) as client:
        overview = await read(client, "workflow://travel_booking/overview")
        graph = json.loads(await read(client, "workflow://travel_booking/graph"))
    async with mcp_client(server, headers=colliding) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        problems = json.loads(await read(client, "dynamic-tools://session/problems"))
        guided = await read(client, "workflow://travel_booking/overview")
    assert overview.startswith("# Flights API — Workflow Guide")  # the team's text first
    assert "Never call create_booking without check_availability first." in overview
    assert "`w_book_trip`" in overview  # then the generated part
    edges = {(e["from"], e["to"], e["kind"]) for e in graph["edges"]}
    assert ("w_book_trip", "w_book_flight", "runs") in edges
    assert ("w_book_flight", "search_flights", "calls") in edges
    assert {n["kind"] for n in graph["nodes"]} == {"workflow", "tool"}
    assert [p["violations"][0]["rule"] for p in problems] == ["collision"]
    assert problems[0]["workflow"] == "book_flight"
    assert "w_rebook" not in names and "w_rebook" not in guided  # a guide is not a tool
    assert "(a guide: no tool runs it)" in guided
    tools = {t for t in names}
    for mentioned in {w for w in guided.split("`") if w.startswith("w_")}:
        assert mentioned in tools, mentioned  # the overview names only tools that exist


async def test_the_planner_pick_scores_best_and_answers_as_plan(
    start_server: Callable[..., str],
) -> None:
    server = start_server()
    goals = [
        "cancel my trip",
        "book a flight from AMS to BCN and wait for approval",
        "book a trip with a hotel",
        "find the cheapest flight across dates",
    ]
    async with mcp_client(server) as client:
        plans = [await client.call_tool("api_plan", {"goal": g}) for g in goals]
        seed = await client.call_tool("_plan", {"goal": goals[0]})
        listed = {t.name for t in (await client.list_tools()).tools}
    for plan in plans:
        data = plan.structured_content
        if data["kind"] == "workflow":
            scores = [a["score"] for a in data["alternatives"]]
            assert all(data["score"] >= s for s in scores), data
    assert not seed.is_error and seed.structured_content == plans[0].structured_content
    assert "_plan" not in listed  # answers under the design's name, listed once as api_plan
