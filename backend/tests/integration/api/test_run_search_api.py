"""Finding runs over REST: ``GET /runs`` filters (param and output values, several statuses,
error text), sort and cursor pages, 422s naming the field, ``GET /runs/stats``, and bulk
cancel and redrive with a report per run — each principal acting on their own runs only.
Tools are mocked (``engine.local.MockTools``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.engine.local import MockTools
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.mocked_runs import FLIGHT, TERMINAL, start, travel_tools, wait_for

TOKEN = "admin-token-for-search-tests-7a2"


def ended(run: dict[str, Any]) -> bool:
    return run["status"] in TERMINAL


def waiting(run: dict[str, Any]) -> bool:
    return run["status"] == "waiting_input"


async def ids(client: httpx.AsyncClient, query: str, **headers: str) -> list[str]:
    answer = await client.get(f"/runs?{query}", headers=headers)
    assert answer.status_code == 200, answer.text
    return [r["run_id"] for r in answer.json()["runs"]]


async def test_runs_are_found_by_values_statuses_and_error(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    ada = await start(client, "book_flight", FLIGHT)
    await wait_for(client, ada, ended)
    bob = await start(client, "book_flight", {**FLIGHT, "passenger": "Bob"})
    await wait_for(client, bob, ended)
    held = await start(client, "book_with_approval", {**FLIGHT, "passenger": "Cy"})
    await wait_for(client, held, waiting)
    tools.mocks["create_booking"] = ToolResult(503, {"error": {"message": "Booking is DOWN"}})
    broken = await start(client, "book_flight", {**FLIGHT, "passenger": "Dee"})
    assert (await wait_for(client, broken, ended))["status"] == "failed"

    assert await ids(client, "params.passenger=Ada") == [ada]
    assert await ids(client, "params.passenger=Ada&params.origin=AMS") == [ada]
    assert await ids(client, "params.passenger=Nobody") == []
    assert sorted(await ids(client, "output.id=BK1")) == sorted([ada, bob])
    assert await ids(client, "status=failed,waiting_input") == [broken, held]
    assert await ids(client, "status=failed&status=waiting_input") == [broken, held]
    assert await ids(client, "error=booking%20is%20down") == [broken]
    assert await ids(client, "workflow_id=book_with_approval,nope") == [held]
    assert await ids(client, "trigger=manual&status=failed") == [broken]
    assert await ids(client, "trigger=schedule") == []
    assert await ids(client, "sort=created_at&limit=2") == [ada, bob]
    listed = (await client.get("/runs?status=succeeded")).json()
    assert listed["total"] == 2 and listed["total_exact"] and listed["next_cursor"] is None
    assert listed["runs"][0]["trigger"] is None

    # cursor pages: every run once, in order
    seen, cursor = [], None
    while True:
        page = (
            await client.get("/runs", params={"limit": 1, **({"cursor": cursor} if cursor else {})})
        ).json()
        seen += [r["run_id"] for r in page["runs"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [broken, held, bob, ada]
    assert await ids(client, "limit=2&offset=2") == [bob, ada]  # offsets still work

    stats = (await client.get("/runs/stats")).json()
    assert stats["total"] == 4 and stats["by_status"]["succeeded"] == 2
    assert {w["workflow_id"]: w["total"] for w in stats["by_workflow"]} == {
        "book_flight": 3,
        "book_with_approval": 1,
    }
    assert sum(b["total"] for b in stats["buckets"]) == 4 and stats["bucket_s"] == 1800
    narrowed = (await client.get("/runs/stats?status=failed&bucket=3600")).json()
    assert narrowed["total"] == 1 and len(narrowed["buckets"]) in (24, 25)


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("status=failed,bogus", "query.status"),
        ("status=bogus", "query.status"),
        ("colour=red", "query.colour"),
        ("cursor=zzz", "cursor"),
        ("sort=status", "query.sort"),
        ("since=yesterday", "query.since"),
        ("ended_after=2026-01-01", "query.ended_after"),
        ("trigger=cron", "query.trigger"),
        ("params.=x", "query.params."),
        ("limit=501", "query.limit"),
        ("bucket=60", "query.bucket"),
    ],
)
async def test_malformed_filters_are_refused_naming_the_field(
    client: httpx.AsyncClient, query: str, path: str
) -> None:
    answer = await client.get(f"/runs?{query}")
    assert answer.status_code == 422, answer.text
    paths = [
        v.get("path") or ".".join(map(str, v.get("loc", []))) for v in answer.json()["violations"]
    ]
    assert any(p == path or p.startswith(f"{path}.") for p in paths), answer.json()


async def test_stats_refuse_too_many_buckets_and_paging_keys(client: httpx.AsyncClient) -> None:
    too_many = await client.get("/runs/stats?since=2026-01-01T00:00:00Z&bucket=60")
    assert too_many.status_code == 422
    assert too_many.json()["violations"][0]["path"] == "bucket"
    paged = await client.get("/runs/stats?limit=3")
    assert paged.status_code == 422 and paged.json()["violations"][0]["path"] == "query.limit"


async def test_bulk_cancel_and_redrive_report_each_run(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    held = [await start(client, "book_with_approval", {**FLIGHT, "passenger": p}) for p in "AB"]
    for run_id in held:
        await wait_for(client, run_id, waiting)
    done = await start(client, "book_flight", FLIGHT)
    await wait_for(client, done, ended)

    refused = await client.post("/runs/cancel")
    assert refused.status_code == 422 and refused.json()["violations"][0]["path"] == "filter"
    preview = await client.post(
        "/runs/cancel?workflow_id=book_with_approval", json={"dry_run": True}
    )
    assert preview.status_code == 200, preview.text
    assert preview.json()["matched"] == 2 and preview.json()["counts"] == {"would_cancel": 2}
    assert {r["run_id"] for r in preview.json()["results"]} == set(held)
    assert (await client.get(f"/runs/{held[0]}")).json()["status"] == "waiting_input"

    cancelled = await client.post(
        "/runs/cancel?params.passenger=A", json={"run_ids": [held[0], done, "nope"]}
    )
    report = cancelled.json()
    assert cancelled.status_code == 200 and report["matched"] == 1, report
    outcomes = {r["run_id"]: (r["outcome"], r["reason"]) for r in report["results"]}
    assert outcomes[held[0]] == ("cancelled", None)
    assert outcomes[done][0] == "skipped" and "ended" in outcomes[done][1]
    assert outcomes["nope"][0] == "skipped" and "does not exist" in outcomes["nope"][1]
    assert report["filter"]["params.passenger"] == "A"

    redriven = await client.post("/runs/redrive?status=cancelled")
    report = redriven.json()
    assert redriven.status_code == 200 and report["counts"] == {"redriven": 1}, report
    new_run = report["results"][0]["new_run_id"]
    assert report["results"][0]["run_id"] == held[0] and new_run
    assert (await client.get(f"/runs/{new_run}")).json()["redrive_of"] == held[0]
    rest = await client.post("/runs/cancel?status=waiting_input,running,pending")
    assert rest.json()["matched"] >= 1
    assert all(r["outcome"] in ("cancelled", "skipped") for r in rest.json()["results"])


@pytest.fixture
def guarded(tmp_path: Path, make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(
        registry_config_path=tmp_path / "registry" / "config.yaml",
        seed_examples_from=EXAMPLES,
        api_token=TOKEN,
    )


async def test_each_principal_finds_and_acts_on_their_own_runs_only(guarded: Settings) -> None:
    admin = {"Authorization": f"Bearer {TOKEN}"}
    async with app_client(create_app(guarded, tool_runner=travel_tools())) as client:
        keys = []
        for name in ("ann", "ben"):
            made = await client.post(
                "/keys", json={"name": name, "scopes": ["read", "run"]}, headers=admin
            )
            keys.append({"Authorization": f"Bearer {made.json()['key']}"})
        ann, ben = keys
        runs = {}
        for who, headers in (("ann", ann), ("ben", ben)):
            answer = await client.post(
                "/workflows/book_with_approval/runs", json={"params": FLIGHT}, headers=headers
            )
            runs[who] = answer.json()["run_id"]
        assert await ids(client, "params.passenger=Ada", **ann) == [runs["ann"]]
        assert await ids(client, "params.passenger=Ada&owner=admin", **ann) == [runs["ann"]]
        assert sorted(await ids(client, "params.passenger=Ada", **admin)) == sorted(runs.values())
        assert (await client.get("/runs/stats", headers=ben)).json()["total"] == 1

        # ann's bulk cancel over "every active run" touches hers only; ben's run named by id
        # is answered as unknown, exactly as a run that does not exist
        answer = await client.post(
            "/runs/cancel?workflow_id=book_with_approval",
            json={"run_ids": [runs["ann"], runs["ben"]]},
            headers=ann,
        )
        report = answer.json()
        assert answer.status_code == 200, report
        outcomes = {r["run_id"]: r for r in report["results"]}
        assert outcomes[runs["ann"]]["outcome"] == "cancelled"
        assert outcomes[runs["ben"]]["outcome"] == "skipped"
        assert "does not exist" in outcomes[runs["ben"]]["reason"]
        assert report["filter"]["owner"] != "admin"
        ben_run = (await client.get(f"/runs/{runs['ben']}", headers=admin)).json()
        assert ben_run["status"] != "cancelled"
        reader = await client.post(
            "/keys", json={"name": "reader", "scopes": ["read"]}, headers=admin
        )
        forbidden = await client.post(
            "/runs/cancel?status=running",
            headers={"Authorization": f"Bearer {reader.json()['key']}"},
        )
        assert forbidden.status_code == 403
