"""The authoring operations over REST (the same as the MCP workflow.* tools)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.documents import draft

DRAFT = draft("first_seats")


@pytest.fixture
async def client(
    make_settings: Callable[..., Settings], registry_root: Path
) -> AsyncIterator[httpx.AsyncClient]:
    shutil.copytree(EXAMPLES / "workflows", registry_root / "workflows")
    async with app_client(create_app(make_settings())) as http:
        yield http


async def test_previews_and_input_resolution_of_a_draft(client: httpx.AsyncClient) -> None:
    inputs = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
    rendered = await client.post(
        "/authoring/preview-rendered", json={"content": DRAFT, "inputs": inputs}
    )
    resolved = await client.post(
        "/authoring/resolve-inputs", json={"content": DRAFT, "inputs": {"origin": "AMS"}}
    )
    plan = await client.post("/authoring/step-plan", json={"workflow_id": "book_flight"})
    needed = await client.post("/authoring/preview-inputs", json={"workflow_id": "book_flight"})
    providers = await client.get("/authoring/providers")
    assert rendered.status_code == 200, rendered.text
    assert rendered.json()["steps"][0]["args"] == inputs
    body = resolved.json()
    assert body["ready"] is False and body["inputs"]["date"]["outcome"] == "prompt"
    assert [s["node_id"] for s in plan.json()["steps"]][:2] == ["search", "check"]
    assert needed.json()["schema"]["required"] == ["origin", "destination", "date", "passenger"]
    feeds = {p["provider"]: p["feeds"] for p in providers.json()["providers"]}
    assert "create_booking.flight_id" in feeds["search_flights"]


async def test_bad_drafts_and_targets_are_clear_errors(client: httpx.AsyncClient) -> None:
    broken = await client.post(
        "/authoring/step-plan", json={"content": DRAFT.replace("check_availability", "nope")}
    )
    nothing = await client.post("/authoring/step-plan", json={})
    unknown = await client.post("/authoring/step-plan", json={"workflow_id": "missing"})
    assert broken.status_code == 422 and "nope" in broken.text
    assert broken.json()["violations"][0]["line"] == 15
    assert nothing.status_code == 422 and nothing.json()["violations"][0]["path"] == "workflow_id"
    assert unknown.status_code == 404


async def test_purging_history_keeps_active_runs(client: httpx.AsyncClient) -> None:
    started = await client.post(
        "/authoring/runs",
        json={"content": DRAFT, "inputs": {"origin": "AMS", "destination": "BCN"}},
    )
    assert started.status_code == 422  # inputs are checked before anything runs
    assert started.json()["violations"][0]["path"].endswith("date")
    purged = await client.delete("/runs", params={"workflow_id": "first_seats"})
    assert purged.status_code == 200 and purged.json()["removed_runs"] == 0
