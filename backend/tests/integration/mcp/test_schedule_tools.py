"""Schedules and webhooks over REST and MCP (the SDK client, both revisions), by scope and owner.

A reader lists schedules (next five fire times) and webhooks; an author pauses and resumes; a
runner runs a schedule now and owns that run, which another principal cannot see.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.mcp_client import LEGACY, MODERN, call, mcp_client

TOKEN = "admin-token-for-schedule-tools-77"
DOCUMENT = """\
domain: reports
workflows:
  morning_report:
    params:
      asked_at: {type: string, required: true}
    graph:
      ask: {type: yield, message: "Send the report?", expects: {ok: {type: bool}}}
    triggers:
      - schedule: weekdays
        cron: "30 7 * * 1-5"
        timezone: America/New_York
        params: {asked_at: $trigger.time}
      - webhook: reopened
        secret: secret:REPORT_HOOK
        params: {asked_at: $body.at}
"""


@pytest.fixture
def base_url(start_server: Callable[..., str], travel_root: Path) -> str:
    (travel_root / "workflows" / "reports.yaml").write_text(DOCUMENT)
    return start_server(api_token=TOKEN, schedules_enabled=False)


def key(base_url: str, name: str, *scopes: str) -> dict[str, str]:
    made = httpx.post(
        f"{base_url}/keys",
        json={"name": name, "scopes": list(scopes)},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert made.status_code == 201, made.text
    return {"Authorization": f"Bearer {made.json()['key']}"}


def test_schedules_over_rest_by_scope_and_owner(base_url: str) -> None:
    reader = key(base_url, "reader", "read")
    author = key(base_url, "author", "read", "author")
    runner = key(base_url, "runner", "read", "run")
    other = key(base_url, "other", "read", "run")
    listed = httpx.get(f"{base_url}/workflows/morning_report/schedules", headers=reader).json()
    weekdays = listed["schedules"][0]
    assert weekdays["name"] == "weekdays" and weekdays["timezone"] == "America/New_York"
    times = weekdays["next_fire_times"]
    assert len(times) == 5 and all(
        t.endswith(("11:30:00.000+00:00", "12:30:00.000+00:00")) for t in times
    )
    pause = f"{base_url}/workflows/morning_report/schedules/weekdays/pause"
    assert httpx.post(pause, headers=reader).status_code == 403
    paused = httpx.post(pause, headers=author)
    assert paused.status_code == 200 and paused.json()["paused"] is True
    assert paused.json()["next_fire_times"] == []
    resumed = httpx.post(pause.replace("pause", "resume"), headers=author).json()
    assert resumed["paused"] is False and len(resumed["next_fire_times"]) == 5
    run = httpx.post(pause.replace("pause", "run"), headers=runner)
    assert run.status_code == 202, run.text
    run_id = run.json()["run_id"]
    mine = httpx.get(f"{base_url}/runs/{run_id}", headers=runner).json()
    assert mine["trigger"]["kind"] == "schedule" and mine["trigger"]["name"] == "weekdays"
    assert mine["params"]["asked_at"] == mine["trigger"]["time"]
    assert httpx.get(f"{base_url}/runs/{run_id}", headers=other).status_code == 404
    unknown = httpx.post(pause.replace("weekdays", "weekends"), headers=author)
    assert unknown.status_code == 404 and "weekdays" in unknown.json()["message"]
    hooks = httpx.get(f"{base_url}/workflows/morning_report/webhooks", headers=reader).json()
    assert hooks["webhooks"][0]["url"] == f"{base_url}/hooks/morning_report/reopened"
    assert hooks["webhooks"][0]["secret_set"] is False
    example = f"{base_url}/workflows/morning_report/webhooks/reopened/example"
    assert httpx.post(example, json={}, headers=reader).status_code == 403
    assert httpx.post(example, json={}, headers=author).status_code == 503  # no secret set


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_schedules_over_mcp_in_both_revisions(base_url: str, mode: str) -> None:
    author = key(base_url, f"mcp-author-{mode}", "read", "author", "run")
    reader = key(base_url, f"mcp-reader-{mode}", "read")
    async with mcp_client(base_url, headers=author, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {
            "workflow.schedules.list",
            "workflow.schedules.pause",
            "workflow.schedules.resume",
            "workflow.schedules.run_now",
            "workflow.webhooks.list",
        } <= names
        listed = await call(client, "workflow.schedules.list", workflow_id="morning_report")
        assert len(listed["schedules"][0]["next_fire_times"]) == 5
        paused = await call(
            client, "workflow.schedules.pause", workflow_id="morning_report", schedule="weekdays"
        )
        assert paused["paused"] is True
        resumed = await call(
            client, "workflow.schedules.resume", workflow_id="morning_report", schedule="weekdays"
        )
        assert resumed["paused"] is False
        started = await call(
            client, "workflow.schedules.run_now", workflow_id="morning_report", schedule="weekdays"
        )
        assert started["trigger"]["kind"] == "schedule" and started["run_id"]
        wrong = await call(
            client, "workflow.schedules.pause", workflow_id="morning_report", schedule="nope"
        )
        assert wrong["is_error"] and wrong["error_code"].lower() == "not_found"
        missing = await call(client, "workflow.schedules.pause", workflow_id="morning_report")
        assert missing["is_error"] and "schedule" in json.dumps(missing)
        unknown = await call(
            client,
            "workflow.schedules.run_now",
            workflow_id="morning_report",
            schedule="weekdays",
            when="now",
        )
        assert unknown["is_error"] and "when" in json.dumps(unknown)
        hooks = await call(client, "workflow.webhooks.list", workflow_id="morning_report")
        assert hooks["webhooks"][0]["path"] == "/hooks/morning_report/reopened"
    async with mcp_client(base_url, headers=reader, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "workflow.schedules.list" in names
        with pytest.raises(MCPError, match="needs the 'author' scope"):
            await call(
                client,
                "workflow.schedules.pause",
                workflow_id="morning_report",
                schedule="weekdays",
            )
