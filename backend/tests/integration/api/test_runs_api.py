"""Runs over the API: start, per-node state, yields and resume, cancel, list filters, and the
live event stream over real HTTP. Tools are mocked (``engine.local.MockTools``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.engine.local import MockTools, Responses
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.settings import Settings
from tests.support.mocked_runs import FLIGHT, TERMINAL, finished, start, travel_tools, wait_for
from tests.support.servers import serve


async def test_a_run_succeeds_with_per_node_state(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    run_id = await start(client, "book_flight", FLIGHT)
    run = await wait_for(client, run_id, finished)
    assert run["status"] == "succeeded" and run["error"] is None and run["waiting"] is None
    assert run["workflow_id"] == "book_flight" and run["params"] == FLIGHT
    assert run["result"] == {"id": "BK1", "status": "reserved"}
    nodes = run["nodes"]
    assert [n for n, s in nodes.items() if s["status"] == "succeeded"] == [
        "search",
        "check",
        "decide",
        "reserve",
    ]
    assert nodes["waitlist"]["status"] == nodes["fail_booking"]["status"] == "skipped"
    assert nodes["check"]["input"] == {"flight_id": "FL1"}
    assert nodes["check"]["output"] == {"flight_id": "FL1", "seats_available": 4}
    assert nodes["reserve"]["attempts"] == 1 and nodes["reserve"]["duration_ms"] is not None
    assert nodes["reserve"]["started_at"] <= nodes["reserve"]["ended_at"]
    assert [c[0] for c in tools.calls] == ["search_flights", "check_availability", "create_booking"]
    assert tools.calls[2][2] == f"{run_id}:reserve"  # the idempotency key


@pytest.mark.parametrize(
    "tools", [travel_tools(create_booking=Responses([ToolResult(503, {}), {"id": "BK9"}]))]
)
async def test_retries_show_as_attempts(client: httpx.AsyncClient) -> None:
    run = await wait_for(client, await start(client, "book_flight", FLIGHT), finished)
    assert run["status"] == "succeeded" and run["result"] == {"id": "BK9"}
    assert run["nodes"]["reserve"]["attempts"] == 2


async def test_bad_params_are_refused_field_by_field(client: httpx.AsyncClient) -> None:
    params = {"origin": 7, "destination": "BCN", "passenger": "Ada", "seats": 2}
    answer = await client.post("/workflows/book_flight/runs", json={"params": params})
    assert answer.status_code == 422
    paths = {v["path"]: v["rule"] for v in answer.json()["violations"]}
    assert paths == {"params.origin": "type", "params.date": "required", "params.seats": "unknown"}
    body = await client.post("/workflows/book_flight/runs", json={"params": [1]})
    assert body.status_code == 422
    assert (await client.post("/workflows/nope/runs", json={"params": {}})).status_code == 404
    assert (await client.get("/runs")).json()["total"] == 0


async def test_a_document_with_errors_does_not_run(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    path = settings.workflows_dir / "travel.yaml"
    path.write_text(path.read_text().replace("call: search_flights", "call: search_flightz"))
    await client.post("/workflows/_reload")
    answer = await client.post("/workflows/book_flight/runs", json={"params": FLIGHT})
    assert answer.status_code == 422 and answer.json()["error_code"] == "workflow_invalid"
    assert any(v["rule"] == "unknown_tool" for v in answer.json()["violations"])
    assert (await client.get("/runs")).json()["total"] == 0


async def test_a_yield_waits_and_resumes(client: httpx.AsyncClient, tools: MockTools) -> None:
    run_id = await start(client, "book_with_approval", FLIGHT)
    run = await wait_for(client, run_id, lambda r: r["status"] == "waiting_input")
    waiting = run["waiting"]
    assert waiting["node_id"] == "present_options"
    assert waiting["message"] == (
        "Found 2 flights (FL1 at 120.0 EUR first). Which one would you like to book?"
    )
    offered = waiting["expects"]["selected_flight_id"]
    assert offered["type"] == "str" and offered["required"] is True
    assert offered["enum"] == ["FL1", "FL2"]
    assert offered["options"][0] == {
        "value": "FL1",
        "label": "KLM at 07:10, 120.0 EUR",
        "item": {"id": "FL1", "airline": "KLM", "departure_time": "07:10", "price": 120.0},
    }
    assert run["nodes"]["present_options"]["status"] == "waiting_input"
    cases = (
        ({}, "required"),
        ({"selected_flight_id": 5}, "type"),
        ({"selected_flight_id": "FL-TYPO"}, "enum"),  # not one of the offered flights
    )
    for values, rule in cases:
        bad = await client.post(f"/runs/{run_id}/resume", json={"values": values})
        assert bad.status_code == 422
        assert [(v["path"], v["rule"]) for v in bad.json()["violations"]] == [
            ("values.selected_flight_id", rule)
        ]
        if rule == "enum":
            assert "must be one of ['FL1', 'FL2']" in bad.json()["violations"][0]["message"]
    assert (await client.get(f"/runs/{run_id}")).json()["status"] == "waiting_input"
    good = await client.post(
        f"/runs/{run_id}/resume", json={"values": {"selected_flight_id": "FL2"}}
    )
    assert good.status_code == 200 and good.json()["status"] in ("running", "succeeded")
    run = await wait_for(client, run_id, finished)
    assert run["status"] == "succeeded" and run["result"] == {"id": "PAY1", "status": "paid"}
    assert run["nodes"]["present_options"]["output"] == {"selected_flight_id": "FL2"}
    assert ("create_booking", {"flight_id": "FL2", "passenger": "Ada"}) in [
        (c[0], c[1]) for c in tools.calls
    ]
    again = await client.post(f"/runs/{run_id}/resume", json={"values": {}})
    assert again.status_code == 409


async def test_cancel(client: httpx.AsyncClient) -> None:
    run_id = await start(client, "book_with_approval", FLIGHT)
    await wait_for(client, run_id, lambda r: r["status"] == "waiting_input")
    cancelled = await client.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    run = (await client.get(f"/runs/{run_id}")).json()
    assert run["status"] == "cancelled" and run["error"]["message"] == "the run was cancelled"
    assert run["waiting"] is None and run["finished_at"] is not None
    assert (await client.post(f"/runs/{run_id}/cancel")).status_code == 409
    resume = await client.post(f"/runs/{run_id}/resume", json={"values": {}})
    assert resume.status_code == 409


async def test_unknown_runs_are_404(client: httpx.AsyncClient) -> None:
    for answer in (
        await client.get("/runs/nope"),
        await client.get("/runs/nope/events"),
        await client.post("/runs/nope/resume", json={"values": {}}),
        await client.post("/runs/nope/cancel"),
    ):
        assert answer.status_code == 404 and answer.json()["error_code"] == "not_found"


async def test_list_filters(client: httpx.AsyncClient) -> None:
    first = await start(client, "book_flight", FLIGHT)
    await wait_for(client, first, finished)
    between = (await client.get(f"/runs/{first}")).json()["finished_at"]
    await asyncio.sleep(0.01)
    second = await start(client, "book_flight", FLIGHT)
    await wait_for(client, second, finished)
    paused = await start(client, "book_with_approval", FLIGHT)
    await wait_for(client, paused, lambda r: r["status"] == "waiting_input")

    async def ids(**params: Any) -> list[str]:
        answer = await client.get("/runs", params=params)
        assert answer.status_code == 200, answer.text
        return [r["run_id"] for r in answer.json()["runs"]]

    assert await ids() == [paused, second, first]
    assert await ids(status="succeeded") == [second, first]
    assert await ids(status="waiting_input") == [paused]
    assert await ids(workflow_id="book_with_approval") == [paused]
    assert await ids(since=between) == [paused, second]
    assert await ids(until=between) == [first]
    assert await ids(limit=1, offset=1) == [second]
    listed = (await client.get("/runs", params={"status": "succeeded"})).json()
    assert listed["total"] == 2 and all(r["duration_ms"] >= 0 for r in listed["runs"])
    assert (await client.get("/runs", params={"status": "done"})).status_code == 422
    assert (await client.get("/runs", params={"since": "yesterday"})).status_code == 422
    assert (await client.get("/runs", params={"limit": 0})).status_code == 422


async def read_events(lines: AsyncIterator[str], until: str) -> list[dict[str, Any]]:
    """Events from the lines of an SSE response, up to and including the first ``until``."""
    events: list[dict[str, Any]] = []
    event_id = None
    async for line in lines:
        if line.startswith("id:"):
            event_id = int(line[3:])
        elif line.startswith("data:"):
            events.append({**json.loads(line[5:]), "sse_id": event_id})
            if events[-1]["type"] == until:
                return events
    return events


async def test_events_stream_live_over_http(settings: Settings) -> None:
    with serve(create_app(settings, tool_runner=travel_tools()), port=settings.port) as url:
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            answer = await http.post("/workflows/book_with_approval/runs", json={"params": FLIGHT})
            run_id = answer.json()["run_id"]
            async with http.stream("GET", f"/runs/{run_id}/events") as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                lines = stream.aiter_lines()
                paused = await asyncio.wait_for(read_events(lines, "waiting_input"), 10)
                assert paused[0]["type"] == "run_created" and paused[1]["type"] == "run_started"
                assert paused[-1]["message"].startswith("Found 2 flights")
                resumed = await http.post(
                    f"/runs/{run_id}/resume", json={"values": {"selected_flight_id": "FL1"}}
                )
                assert resumed.status_code == 200
                rest = await asyncio.wait_for(read_events(lines, "run_succeeded"), 10)
                tail = [line async for line in lines if line.strip()]
            assert tail == []  # the stream ended after the terminal event
            kinds = [(e["type"], e.get("node_id")) for e in rest]
            assert kinds[0] == ("resumed", "present_options")
            assert ("node_succeeded", "book") in kinds and ("node_succeeded", "pay") in kinds
            ids = [e["sse_id"] for e in paused + rest]
            assert ids == list(range(1, len(ids) + 1))
            assert rest[-1]["result"] == {"id": "PAY1", "status": "paid"}

            wait_id = paused[-1]["sse_id"]
            replay = await http.get(
                f"/runs/{run_id}/events", headers={"Last-Event-ID": str(wait_id)}
            )
            replayed = [
                json.loads(x[5:]) for x in replay.text.splitlines() if x.startswith("data:")
            ]
            assert [e["position"] for e in replayed] == ids[wait_id:]
            after = await http.get(f"/runs/{run_id}/events", params={"after": ids[-2]})
            assert [x for x in after.text.splitlines() if x.startswith("event:")] == [
                "event: run_succeeded"
            ]
            bad = await http.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "x"})
            assert bad.status_code == 422


async def test_unknown_body_fields_are_refused_by_name(client: httpx.AsyncClient) -> None:
    started = await client.post(
        "/workflows/book_flight/runs", json={"params": {"origin": "AMS"}, "bogus": 1}
    )
    resumed = await client.post("/runs/nope/resume", json={"values": {}, "extra": True})
    listed = (await client.get("/runs")).json()["runs"]
    assert started.status_code == 422 and "bogus" in started.text
    assert resumed.status_code == 422 and "extra" in resumed.text
    assert listed == []  # nothing started


async def test_a_failed_call_is_told_in_the_apis_words_and_unreached_nodes_are_not_run(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    said = {"error": {"code": "not_found", "message": "no flight 'FL1'", "field": "flight_id"}}
    tools.mocks["create_booking"] = ToolResult(404, said)
    started = await client.post("/workflows/book_flight/runs", json={"params": FLIGHT})
    run_id = started.json()["run_id"]
    run = await wait_for(client, run_id, finished)
    assert run["status"] == "failed"
    reserve = run["nodes"]["reserve"]
    assert reserve["status"] == "failed"
    assert reserve["error"] == (
        "create_booking answered HTTP 404 Not Found: no flight 'FL1' (field flight_id)"
    )
    assert reserve["detail"]["status_code"] == 404
    assert reserve["detail"]["api_message"] == "no flight 'FL1' (field flight_id)"
    assert run["nodes"]["waitlist"]["status"] == "skipped"  # the branch chose reserve
    assert run["nodes"]["waitlist"]["error"] == "not activated"
    # the error node activated by the fallback carries the call that caused it
    assert run["error"]["node_id"] == "fail_booking"
    assert run["error"]["cause"]["api_message"] == "no flight 'FL1' (field flight_id)"

    listed = (await client.get("/runs", params={"status": "failed"})).json()["runs"]
    assert listed[0]["run_id"] == run_id
    assert listed[0]["error"] == {
        "message": run["error"]["message"],
        "node_id": "fail_booking",
        "status_code": 404,
        "api_message": "no flight 'FL1' (field flight_id)",
    }

    tools.mocks["search_flights"] = ToolResult(503, {"detail": "search is down"})
    started = await client.post("/workflows/book_flight/runs", json={"params": FLIGHT})
    run_id = started.json()["run_id"]
    run = await wait_for(client, run_id, lambda r: r["status"] in TERMINAL)
    states = {node_id: node["status"] for node_id, node in run["nodes"].items()}
    assert states["search"] == "failed"
    unreached = ("check", "decide", "reserve", "waitlist", "fail_booking")
    assert {states[n] for n in unreached} == {"not_run"}
    assert run["nodes"]["check"]["error"] == "the run failed before it"
    assert run["error"]["api_message"] == "search is down"
    stream = (await client.get(f"/runs/{run_id}/events")).text  # ends at the terminal event
    assert stream.count("event: node_not_run") == len(unreached)
