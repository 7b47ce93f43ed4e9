"""Workflow authoring over MCP: resources, prompts and the workflow.* tools.

Design: docs/design-sources.md#mcp-authoring-design.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import mcp_types as types

from tests.support.documents import draft
from tests.support.mcp_client import call, confirmed_call, mcp_client

DRAFT = draft("cheapest_seat")
DESTRUCTIVE = ("workflow.delete", "workflow.purge_history", "workflow.cancel", "catalog.remove")


async def test_a_sentence_becomes_a_saved_workflow_and_a_run(server: str) -> None:
    changed: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append(message)

    async with mcp_client(server, message_handler=on_message) as client:
        prompt = await client.get_prompt(
            "workflow.author", {"goal": "find the cheapest flight and check its seats"}
        )
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert "find the cheapest flight" in text and "## JSON Schema of documents" in text
        # the schema is named, not pasted: the prompt stays readable by a small model
        assert "dynamic-tools://workflow.schema" in text and len(text) < 16_000
        assert "- search_flights(origin, destination, date, passengers)" in text
        assert "# Workflow documents — format reference" in text

        checked = await call(client, "workflow.validate", content=DRAFT)  # the model's draft
        assert checked["valid"] is False and not checked["is_error"]
        error = checked["errors"][0]
        assert "check_seats" in error["message"] and error["line"] == 15  # the call line

        fix = await client.get_prompt("workflow.fix_validation", {"content": DRAFT})
        fix_text = fix.messages[0].content.text  # type: ignore[union-attr]
        assert "check_seats" in fix_text and "## Violations" in fix_text
        fixed = DRAFT.replace("call: check_seats", "call: check_availability")
        assert (await call(client, "workflow.validate", content=fixed))["valid"] is True

        saved = await call(client, "workflow.save", content=fixed)
        assert not saved["is_error"], saved
        assert saved["version"]
        names = {t.name for t in (await client.list_tools()).tools}
        assert "w_cheapest_seat" in names and changed

        run = await call(
            client,
            "workflow.run",
            workflow_id="cheapest_seat",
            inputs={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
        )
        assert not run["is_error"], run
    finished = await _finished(server, run["run_id"])
    assert finished["status"] == "succeeded"
    assert finished["result"]["flight"] == "FL-AMSBCN-20261201-1"


async def _finished(url: str, run_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        for _ in range(400):
            run: dict[str, Any] = (await http.get(f"{url}/runs/{run_id}")).json()
            if run["status"] in ("succeeded", "failed", "cancelled"):
                return run
            await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


async def test_concurrent_saves_with_one_version_exactly_one_wins(server: str) -> None:
    async with mcp_client(server) as first, mcp_client(server) as second:
        current = await call(first, "workflow.get", workflow_id="book_hotel")
        version = current["version"]
        edits = [
            current["content"].replace("Search hotels in a city", f"Edit {n}: search hotels")
            for n in (1, 2)
        ]
        results = await asyncio.gather(
            call(
                first,
                "workflow.save",
                content=edits[0],
                workflow_id="book_hotel",
                expected_version=version,
            ),
            call(
                second,
                "workflow.save",
                content=edits[1],
                workflow_id="book_hotel",
                expected_version=version,
            ),
        )
        after = await call(first, "workflow.get", workflow_id="book_hotel")
    outcomes = sorted(r["is_error"] for r in results)
    assert outcomes == [False, True]
    loser = next(r for r in results if r["is_error"])
    assert loser["error_code"] == "CONFLICT" and loser["category"] == "conflict"
    winner = next(r for r in results if not r["is_error"])
    assert after["version"] == winner["version"] != version


async def test_safety_levels_and_prompts_never_ask_for_destructive_tools(server: str) -> None:
    async with mcp_client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        prompts = (await client.list_prompts()).prompts
        texts = []
        for prompt in prompts:
            arguments = {
                "goal": "book a trip",
                "workflow_id": "book_flight",
                "changes": "add a payment step",
                "content": DRAFT,
            }
            wanted = {a.name: arguments.get(a.name, "{}") for a in prompt.arguments or []}
            got = await client.get_prompt(prompt.name, wanted)
            texts.append(got.messages[0].content.text)  # type: ignore[union-attr]
    assert {p.name for p in prompts} == {
        "workflow.author",
        "workflow.extend",
        "workflow.fix_validation",
        "workflow.run_with_inputs",
    }
    for text in texts:
        assert not [name for name in DESTRUCTIVE if name in text]
    assert tools["workflow.list"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["workflow.save"].annotations.destructive_hint is False  # type: ignore[union-attr]
    for name in ("workflow.delete", "workflow.purge_history", "workflow.cancel"):
        assert tools[name].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools[name].meta == {
            "dynamic-tools/safety": "destructive",
            "execution_type": "local",
            "http_method": None,
        }


async def test_resources_for_authoring(server: str) -> None:
    async with mcp_client(server) as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        read = {
            name: (await client.read_resource(f"dynamic-tools://{name}")).contents[0].text  # type: ignore[union-attr]
            for name in (
                "workflow.spec",
                "workflow.schema",
                "workflow.manifests",
                "command.catalog",
                "provider.catalog",
            )
        }
        manifest = await client.read_resource("dynamic-tools://workflow.manifest/book_flight")
    assert "dynamic-tools://workflow.spec" in uris
    assert "## Value providers" in read["workflow.spec"]
    assert json.loads(read["workflow.schema"])["title"] == "Dynamic Tools workflow document"
    manifests = {m["id"]: m for m in json.loads(read["workflow.manifests"])["workflows"]}
    assert manifests["cancel_trip"]["format"] == "xml" and manifests["book_flight"]["version"]
    commands = {c["name"]: c for c in json.loads(read["command.catalog"])["commands"]}
    assert commands["create_booking"]["arguments"] == ["flight_id", "passenger"]
    assert commands["create_booking"]["http_method"] == "POST"
    providers = json.loads(read["provider.catalog"])["providers"]
    search = next(p for p in providers if p["provider"] == "search_flights")
    assert "check_availability.flight_id" in search["feeds"]
    assert "book_flight:" in manifest.contents[0].text  # type: ignore[union-attr]


async def test_previews_inputs_and_history(server: str) -> None:
    fixed = DRAFT.replace("call: check_seats", "call: check_availability")
    async with mcp_client(server) as client:
        rendered = await call(
            client,
            "workflow.preview_rendered",
            content=fixed,
            inputs={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
        )
        partial = await call(
            client, "workflow.resolve_inputs", content=fixed, inputs={"origin": "AMS"}
        )
        plan = await call(client, "workflow.step_plan", workflow_id="book_flight")
        missing = await call(client, "workflow.get", workflow_id="nope")
        draft_run = await call(
            client,
            "workflow.run",
            content=fixed,
            inputs={"origin": "LIS", "destination": "MAD", "date": "2026-12-02"},
        )
        await _finished(server, draft_run["run_id"])
        purged = await confirmed_call(client, "workflow.purge_history", workflow_id="cheapest_seat")
    search = rendered["steps"][0]
    assert search["args"] == {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
    seats = rendered["steps"][1]
    assert seats["pending"] == [
        {"arg": "flight_id", "from": "$flights.0.id", "when": "at run time"}
    ]
    assert partial["ready"] is False
    assert partial["inputs"]["origin"]["outcome"] == "resolved"
    assert partial["inputs"]["destination"]["outcome"] == "prompt"
    assert [s["node_id"] for s in plan["steps"]][:2] == ["search", "check"]
    assert missing["is_error"] and missing["category"] == "not_found"
    assert purged["removed_runs"] == 1
    async with httpx.AsyncClient() as http:
        gone = await http.get(f"{server}/runs/{draft_run['run_id']}")
    assert gone.status_code == 404


async def test_a_failed_run_is_redriven_from_the_failed_node(server: str) -> None:
    params = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
    sold_out = {"operation": "create_booking", "fail_next": 1, "status": 409}
    httpx.post(f"{server}/demo/travel/_faults", json=sold_out)
    async with mcp_client(server) as client:
        run = await call(client, "workflow.run", workflow_id="book_flight", inputs=params)
        failed = await _finished(server, run["run_id"])
        assert failed["status"] == "failed"
        searches = httpx.get(f"{server}/demo/travel/_stats").json()["operations"]
        preview = await call(client, "workflow.redrive", run_id=run["run_id"], dry_run=True)
        assert preview["dry_run"] is True and "run_id" not in preview, preview
        redriven = await call(client, "workflow.redrive", run_id=run["run_id"])
        assert not redriven["is_error"], redriven
        assert redriven["reused"] == preview["reused"]
        assert redriven["runs_again"] == preview["runs_again"]
        assert redriven["redrive_of"] == run["run_id"]
        assert redriven["reused"] == ["search", "check", "decide"]
        assert "reserve" in redriven["runs_again"]
        done = await _finished(server, redriven["run_id"])
        assert done["status"] == "succeeded" and done["redrive_of"] == run["run_id"]
        after = httpx.get(f"{server}/demo/travel/_stats").json()["operations"]
        assert after["search_flights"]["calls"] == searches["search_flights"]["calls"]

        again = await call(client, "workflow.redrive", run_id=redriven["run_id"])  # succeeded
        assert again["is_error"] and again["error_code"] == "CONFLICT"
        assert "only a failed or cancelled run" in again["message"]
        assert "workflow.run" in again["suggested_action"]
        for wrong, named in (
            ({}, "run_id"),
            ({"run_id": ""}, "run_id"),
            ({"run_id": run["run_id"], "force": True}, "force"),
        ):
            refused = await call(client, "workflow.redrive", **wrong)
            assert refused["is_error"] and refused["error_code"] == "INVALID_INPUT", wrong
            assert [v["path"] for v in refused["violations"]] == [named], refused
