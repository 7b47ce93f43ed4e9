"""The planner fills in the goal, through a real MCP client: `_plan` answers the designs' goal
"Book me a flight from NYC to Paris next week" with w_book_flight clearly ahead of
w_cancel_trip, its inputs taken from the goal (by the goal's words without an LLM, by a
function call with one), what is missing and the w_* call; a goal no workflow fits gets a
drafted workflow (validated, not saved) that workflow.save then saves."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from tests.support.fake_llm import FakeLLM, text, tool_call
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
SEED_GOAL = "Book me a flight from NYC to Paris next week"
NO_FIT_GOAL = "send the weekly report to the team"
DRAFT = """\
domain: reports
version: "1.0"
workflows:
  weekly_report:
    description: Search the week's flights from one airport for the team's report
    params:
      origin: { type: str, required: true, example: AMS }
    graph:
      search:
        call: search_flights
        args: { origin: $origin, destination: BCN, date: "2026-12-01" }
        output: flights
"""


def values(filled: dict[str, Any]) -> dict[str, Any]:
    return {name: entry["value"] for name, entry in filled.items()}


async def test_the_seed_goal_without_an_llm_fills_from_the_goal_text(
    start_server: Callable[..., str],
) -> None:
    server = start_server(openai_base_url=None, openai_api_key=None)
    next_week = (date.today() + timedelta(days=7)).isoformat()
    async with mcp_client(server) as client:
        plan = await call(client, "_plan", goal=SEED_GOAL)
        ready = await call(client, "_plan", goal=SEED_GOAL + " for John Smith")
        nothing = await call(client, "_plan", goal=NO_FIT_GOAL)
        listed = await call(client, "workflow.list")
    assert not plan["is_error"] and plan["kind"] == "workflow"
    assert plan["workflow"]["tool"] == "w_book_flight"
    scores = {a["id"]: a["score"] for a in plan["alternatives"]}
    assert plan["score"] - scores["cancel_trip"] >= 0.15  # was 0.673 against 0.667
    assert values(plan["filled"]) == {"origin": "NYC", "destination": "Paris", "date": next_week}
    assert {e["source"] for e in plan["filled"].values()} == {"goal"}
    assert plan["filled"]["date"]["text"] == "next week"
    assert plan["missing"] == ["passenger"] and plan["ready"] is False
    assert plan["call"]["name"] == "w_book_flight"
    assert "Still needed: passenger." in plan["summary"]
    assert ready["ready"] is True and ready["missing"] == []
    assert ready["call"] == {
        "name": "w_book_flight",
        "arguments": {
            "origin": "NYC",
            "destination": "Paris",
            "date": next_week,
            "passenger": "John Smith",
        },
    }
    assert nothing["no_fit"] is True and nothing["draft"]["drafted"] is False
    assert "drafting one needs an LLM" in nothing["draft"]["message"]
    assert "weekly_report" not in str(listed)


async def test_with_an_llm_the_inputs_are_a_function_call_checked_against_the_schema(
    server: str, fake_llm: FakeLLM
) -> None:
    next_week = (date.today() + timedelta(days=7)).isoformat()
    fake_llm.script(
        tool_call(
            "w_book_flight",
            {"origin": "JFK", "destination": "CDG", "date": "next week", "passenger": "John"},
        )
    )
    async with mcp_client(server) as client:
        plan = await call(client, "_plan", goal=SEED_GOAL)
    assert plan["workflow"]["tool"] == "w_book_flight" and plan["filled_by"] == "llm"
    assert plan["filled"]["origin"] == {"value": "JFK", "source": "llm"}
    assert plan["filled"]["passenger"] == {"value": "John", "source": "llm"}
    # "next week" is no ISO date: the model's value is refused, the goal text's is taken
    assert plan["filled"]["date"] == {"value": next_week, "source": "goal", "text": "next week"}
    assert any("date='next week' is invalid" in n for n in plan["notes"])
    assert plan["ready"] is True and plan["call"]["arguments"]["destination"] == "CDG"
    first = fake_llm.requests[0]
    function = first["tools"][0]["function"]
    assert function["name"] == "w_book_flight" and "required" not in function["parameters"]
    assert date.today().isoformat() in first["messages"][0]["content"]
    # the next best workflows are asked too; a model that calls nothing leaves the text's values
    assert len(fake_llm.requests) == 3
    second = plan["alternatives"][0]
    assert second["filled_by"] == "goal text" and second["filled"]["origin"]["value"] == "NYC"
    assert any("did not call" in n for n in second["notes"])


async def test_a_goal_no_workflow_fits_gets_a_draft_that_workflow_save_saves(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(text("Here it is:\n```yaml\n" + DRAFT + "```"))
    async with mcp_client(server) as client:
        before = await call(client, "workflow.list")
        plan = await call(client, "_plan", goal=NO_FIT_GOAL)
        unchanged = await call(client, "workflow.list")
        names = {t.name for t in (await client.list_tools()).tools}
        draft = plan["draft"]
        saved = await call(client, "workflow.save", **draft["save"]["arguments"])
        after = await call(client, "workflow.list")
        listed = {t.name for t in (await client.list_tools()).tools}
    assert plan["no_fit"] is True and not plan["is_error"]
    assert draft["drafted"] is True and draft["saved"] is False
    assert draft["workflows"] == ["weekly_report"] and draft["content"] == DRAFT
    assert [v for v in draft["violations"] if v.get("severity", "error") == "error"] == []
    assert draft["save"] == {"tool": "workflow.save", "arguments": {"content": DRAFT}}
    assert draft["inputs"]["missing"] == ["origin"]
    assert "weekly_report" in plan["summary"] and "workflow.save" in plan["summary"]
    assert before == unchanged and "w_weekly_report" not in names  # validated, not saved
    assert len(fake_llm.requests) == 1  # drafted once: it validated, no repair
    assert "send the weekly report" in str(fake_llm.requests[0]["messages"])
    assert not saved["is_error"] and saved["workflow_id"] == "weekly_report"
    assert "weekly_report" in str(after) and "w_weekly_report" in listed
