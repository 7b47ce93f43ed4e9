"""Layer 2: recipes learned from ``api_query`` answers, run with no LLM, invalidated on change."""

from __future__ import annotations

from typing import Any

import httpx
import mcp_types as types

from tests.support.fake_llm import FakeLLM, answer, tool_call
from tests.support.mcp_client import mcp_client

SEARCH = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passengers": 2}
RECIPE = "r_search_flights_by_date_destination_origin_passengers"


async def test_a_query_teaches_a_recipe_that_runs_without_the_llm(
    server: str, fake_llm: FakeLLM
) -> None:
    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            notifications.append(message)

    fake_llm.script(tool_call("search_flights", SEARCH))
    async with mcp_client(server, message_handler=on_message) as client:
        answer = await client.call_tool(
            "api_query", {"question": "2 seats from AMS to BCN on 2026-12-01 please"}
        )
        assert not answer.is_error, answer.content
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert RECIPE in listed
        recipe = listed[RECIPE]
        assert set(recipe.input_schema["required"]) == {"origin", "destination", "date"}
        assert "passengers" in recipe.input_schema["properties"]  # mentioned in the question
        assert recipe.annotations is not None and recipe.annotations.read_only_hint is True
        assert "Learned from" in (recipe.description or "")

        llm_calls = len(fake_llm.requests)
        result = await client.call_tool(
            RECIPE, {"origin": "LIS", "destination": "MAD", "date": "2026-12-02"}
        )
    assert not result.is_error, result.content
    flights = result.structured_content["result"]
    assert flights[0]["id"].startswith("FL-LISMAD-20261202")
    assert len(fake_llm.requests) == llm_calls  # no LLM involved
    assert notifications, "tools/list_changed was not sent"


async def test_the_same_answer_is_one_recipe_and_writes_are_never_learned(
    server: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(  # each question: one call, then the answer
        tool_call("search_flights", SEARCH),
        answer(),
        tool_call("search_flights", {**SEARCH, "origin": "LIS"}),
        answer(),
        tool_call("create_booking", {"flight_id": "FL-AMSBCN-20261201-1", "passenger": "Ada"}),
        answer(),
    )
    unsafe = {"X-Allow-Unsafe-Paths": "create_booking"}  # a write the model may choose here
    async with mcp_client(server, headers=unsafe) as client:
        for question in (
            "2 seats from AMS to BCN on 2026-12-01",
            "2 seats from LIS to BCN on 2026-12-01",
            "book FL-AMSBCN-20261201-1 for Ada",
        ):
            assert not (await client.call_tool("api_query", {"question": question})).is_error
        listed = [t for t in (await client.list_tools()).tools if t.name.startswith("r_")]
    assert [t.name for t in listed] == [RECIPE]  # deduplicated; create_booking not learned
    assert "used 2 time(s)" in (listed[0].description or "")


async def test_a_changed_operation_drops_its_recipes(server: str, fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_call("search_flights", SEARCH))
    async with mcp_client(server) as client:
        await client.call_tool("api_query", {"question": "2 seats from AMS to BCN on 2026-12-01"})
        assert RECIPE in {t.name for t in (await client.list_tools()).tools}

        tool = httpx.get(f"{server}/tools/search_flights").json()
        for derived in ("endpoint", "input_schema", "effective_annotations"):
            tool.pop(derived, None)
        tool["parameters"]["cabin"] = {"in": "query", "type": "string", "enum": ["eco", "biz"]}
        changed = httpx.put(f"{server}/tools/search_flights", json=tool)
        assert changed.status_code == 200, changed.text

        names = {t.name for t in (await client.list_tools()).tools}
    assert RECIPE not in names and "search_flights" in names
