"""Redrive over REST: a failed run re-run from the failed node reuses what succeeded (calls not
repeated, a yield's answer kept), runs again what the saga undid, is linked to the original,
and is refused clearly when it cannot be done. Tools are mocked."""

from __future__ import annotations

from typing import Any

import httpx

from dynamic_tools.engine.local import MockTools
from dynamic_tools.engine.ports import ToolResult
from tests.support.mocked_runs import FLIGHT, TERMINAL, start, wait_for

BOOK_AND_PAY = """
domain: redrive_tests
workflows:
  book_and_pay:
    params: { passenger: { type: str, required: true } }
    graph:
      search:
        call: search_flights
        args: { origin: AMS, destination: BCN, date: "2026-12-01" }
        output: flights
      choose:
        type: yield
        depends_on: [search]
        message: Which flight?
        expects:
          flight: { type: str, required: true, choices: { from: $flights, value: $item.id } }
      book:
        depends_on: [choose]
        call: create_booking
        args: { flight_id: $choose.flight, passenger: $passenger }
        output: booking
        compensate_with: { call: cancel_booking, args: { booking_id: $booking.id } }
      pay:
        depends_on: [book]
        call: process_payment
        args: { booking_id: $booking.id }
"""


def calls(tools: MockTools, name: str) -> int:
    return [c[0] for c in tools.calls].count(name)


def ended(run: dict[str, Any]) -> bool:
    return run["status"] in TERMINAL


async def failed_run(client: httpx.AsyncClient, workflow_id: str, params: dict[str, Any]) -> str:
    started = await client.post(f"/workflows/{workflow_id}/runs", json={"params": params})
    assert started.status_code == 202, started.text
    run_id: str = started.json()["run_id"]
    run = await wait_for(client, run_id, ended)
    assert run["status"] == "failed", run
    return run_id


async def test_a_failed_run_is_re_run_from_the_failed_node(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    tools.mocks["create_booking"] = ToolResult(503, {"error": {"message": "booking is down"}})
    old = await failed_run(client, "book_flight", FLIGHT)
    searches, checks = calls(tools, "search_flights"), calls(tools, "check_availability")

    tools.mocks["create_booking"] = {"id": "BK1", "status": "reserved"}
    answer = await client.post(f"/runs/{old}/redrive")
    assert answer.status_code == 202, answer.text
    started = answer.json()
    assert started["redrive_of"] == old and started["run_id"] != old
    assert started["reused"] == ["search", "check", "decide"]
    assert "reserve" in started["runs_again"] and "failed" in started["runs_again"]["reserve"]
    run = await wait_for(client, started["run_id"], ended)
    assert run["status"] == "succeeded", run["error"]
    assert run["redrive_of"] == old
    for node_id in ("search", "check", "decide"):
        assert run["nodes"][node_id]["status"] == "succeeded"
        assert run["nodes"][node_id]["detail"].get("reused_from") == old, run["nodes"]
    assert run["nodes"]["search"]["output"][0]["id"] == "FL1"  # the recorded output
    assert "reused_from" not in run["nodes"]["reserve"]["detail"]
    assert run["nodes"]["waitlist"]["status"] == "skipped"  # the reused branch chose reserve
    # what succeeded was not called again; the failed node and what follows were
    assert calls(tools, "search_flights") == searches
    assert calls(tools, "check_availability") == checks
    listed = (await client.get("/runs", params={"workflow_id": "book_flight"})).json()["runs"]
    assert {r["run_id"]: r["redrive_of"] for r in listed}[started["run_id"]] == old


async def test_a_yield_answer_is_kept_and_what_the_saga_undid_runs_again(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    saved = await client.post("/workflows", json={"content": BOOK_AND_PAY, "format": "yaml"})
    assert saved.status_code == 201, saved.text
    tools.mocks["process_payment"] = ToolResult(402, {"message": "card declined"})
    tools.mocks["create_booking"] = lambda args: {"id": f"BK-{args['flight_id']}"}
    started = await client.post(
        "/workflows/book_and_pay/runs", json={"params": {"passenger": "Ada"}}
    )
    run_id = started.json()["run_id"]
    await wait_for(client, run_id, lambda r: r["status"] == "waiting_input")
    resumed = await client.post(f"/runs/{run_id}/resume", json={"values": {"flight": "FL2"}})
    assert resumed.status_code == 200, resumed.text
    old = await wait_for(client, run_id, ended)
    assert old["status"] == "failed"
    assert old["nodes"]["book"]["detail"]["compensations"][0]["ok"] is True  # undone
    assert calls(tools, "cancel_booking") == 1

    tools.mocks["process_payment"] = {"id": "PAY1", "status": "paid"}
    answer = await client.post(f"/runs/{run_id}/redrive", json={})
    assert answer.status_code == 202, answer.text
    assert answer.json()["reused"] == ["search", "choose"]
    assert "compensation undid it" in answer.json()["runs_again"]["book"]
    run = await wait_for(client, answer.json()["run_id"], ended)
    assert run["status"] == "succeeded", run["error"]  # no new question: the answer was kept
    assert run["nodes"]["choose"]["output"] == {"flight": "FL2"}
    assert run["nodes"]["book"]["output"] == {"id": "BK-FL2"}  # booked again
    assert calls(tools, "search_flights") == 1 and calls(tools, "create_booking") == 2


async def test_a_redrive_is_refused_clearly_when_it_cannot_be_done(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    done = await start(client, "book_flight", FLIGHT)
    await wait_for(client, done, ended)
    refused = await client.post(f"/runs/{done}/redrive")
    assert refused.status_code == 409
    assert refused.json()["context"]["reason"] == "not_redrivable"
    assert "only a failed or cancelled run" in refused.json()["message"]
    missing = await client.post("/runs/nope/redrive")
    assert missing.status_code == 404
    tools.mocks["create_booking"] = ToolResult(409, {"error": {"message": "sold out"}})
    old = await failed_run(client, "book_flight", FLIGHT)
    bad = await client.post(f"/runs/{old}/redrive", json={"allow_changed": True})
    assert bad.status_code == 422 and bad.json()["violations"][0]["path"].endswith("allow_changed")

    # The document changes: the recorded outputs may not fit it any more.
    current = (await client.get("/workflows/book_flight")).json()
    edited = current["content"].replace(
        "Search, check availability, and book a flight", "Search, check and book a flight"
    )
    saved = await client.put(
        "/workflows/book_flight", json={"content": edited, "expected_version": current["version"]}
    )
    assert saved.status_code == 200, saved.text
    changed = await client.post(f"/runs/{old}/redrive")
    assert changed.status_code == 409
    assert changed.json()["context"]["reason"] == "document_changed"
    assert (
        changed.json()["context"]["recorded_version"]
        != changed.json()["context"]["current_version"]
    )
    tools.mocks["create_booking"] = {"id": "BK1", "status": "reserved"}
    allowed = await client.post(f"/runs/{old}/redrive", json={"allow_changed_document": True})
    assert allowed.status_code == 202, allowed.text
    assert (await wait_for(client, allowed.json()["run_id"], ended))["status"] == "succeeded"
    assert (await client.get("/runs")).json()["total"] == 3  # the refusals recorded nothing


async def test_a_redrive_preview_says_what_a_redrive_would_do_and_changes_nothing(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    tools.mocks["create_booking"] = ToolResult(503, {"error": {"message": "booking is down"}})
    old = await failed_run(client, "book_flight", FLIGHT)
    total = (await client.get("/runs")).json()["total"]
    calls_before = len(tools.calls)

    preview = await client.post(f"/runs/{old}/redrive", json={"dry_run": True})
    assert preview.status_code == 200, preview.text
    said = preview.json()
    assert said["dry_run"] is True and said["redrive_of"] == old and "run_id" not in said
    assert said["reused"] == ["search", "check", "decide"]
    assert "failed" in said["runs_again"]["reserve"]
    assert (await client.get("/runs")).json()["total"] == total  # no run was created
    assert len(tools.calls) == calls_before

    tools.mocks["create_booking"] = {"id": "BK1", "status": "reserved"}
    real = await client.post(f"/runs/{old}/redrive", json={})
    assert real.status_code == 202, real.text
    assert real.json()["reused"] == said["reused"]
    assert real.json()["runs_again"] == said["runs_again"]

    done = await wait_for(client, real.json()["run_id"], ended)
    refused = await client.post(f"/runs/{done['run_id']}/redrive", json={"dry_run": True})
    assert refused.status_code == 409
    assert refused.json()["context"]["reason"] == "not_redrivable"
