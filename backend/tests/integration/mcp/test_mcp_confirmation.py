"""One confirmation rule for destructive tools on both protocol revisions.

The probe that found it: with the SDK client in its default mode (2026-07-28),
``workflow.delete`` deleted the file and ``workflow.purge_history`` removed runs with the
client's elicitation callback never called, and a client without elicitation was never asked
on either revision. Now a client that can answer is asked (elicitation on 2025-11-25, an
``InputRequiredResult`` on 2026-07-28), and any other client gets a preview and a
confirmation token first; only a second call carrying the token acts. A changed argument, an
expired token, or a token of another principal or session changes nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp import Client

from dynamic_tools.mcp import confirmation
from tests.conftest import FIXTURES
from tests.integration.mcp.test_mcp_destructive_tools import ended_runs, total_runs
from tests.integration.mcp.test_mcp_stdio import stdio_params
from tests.support.mcp_client import LEGACY, MODERN, call, mcp_client

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
ADMIN_TOKEN = "confirm-admin-token-7c1"
MODES = [MODERN, LEGACY]
CHEAPEST = "find_cheapest_across_dates"  # no other workflow calls it


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def workflow_exists(url: str, workflow_id: str, headers: dict[str, str] | None = None) -> bool:
    answer = httpx.get(f"{url}/workflows/{workflow_id}", headers=headers or {})
    return answer.status_code == 200


def waiting_run(url: str, headers: dict[str, str] | None = None) -> str:
    started = httpx.post(
        f"{url}/workflows/book_with_approval/runs", json={"params": PARAMS}, headers=headers or {}
    ).json()
    run_id = str(started["run_id"])
    for _ in range(600):
        if run_status(url, run_id, headers) == "waiting_input":
            return run_id
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never waited")


def run_status(url: str, run_id: str, headers: dict[str, str] | None = None) -> str:
    return str(httpx.get(f"{url}/runs/{run_id}", headers=headers or {}).json()["status"])


def import_pets(travel_root: Path) -> str:
    (travel_root / "imports").mkdir(exist_ok=True)
    source = travel_root / "imports" / "pets.json"
    source.write_bytes((FIXTURES / "openapi" / "petstore-3.0.json").read_bytes())
    return "imports/pets.json"


def refused(answer: dict[str, Any]) -> bool:
    """An answer refusing the token: a validation error naming ``confirmation_token``."""
    paths = {v["path"] for v in answer.get("violations") or []}
    return bool(answer["is_error"]) and "confirmation_token" in paths


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_can_answer_is_asked_and_a_decline_changes_nothing(
    server: str, travel_root: Path, mode: str
) -> None:
    ended_runs(server, 1)
    run_id = waiting_run(server)
    source = import_pets(travel_root)
    asked: list[str] = []
    answers = ["decline", "accept"] * 4

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        action = answers.pop(0)
        content = {"confirm": True} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async with mcp_client(server, mode=mode, elicitation_callback=answer) as client:
        imported = await call(client, "catalog.import_openapi", source=source, catalog="pets")
        assert not imported["is_error"], imported
        cases: list[tuple[str, dict[str, Any], Callable[[], bool]]] = [
            (
                "workflow.delete",
                {"workflow_id": CHEAPEST},
                lambda: workflow_exists(server, CHEAPEST),
            ),
            ("workflow.purge_history", {"all": True}, lambda: total_runs(server) == 2),
            (
                "workflow.cancel",
                {"run_id": run_id},
                lambda: run_status(server, run_id) == "waiting_input",
            ),
            (
                "catalog.remove",
                {"catalog": "pets"},
                lambda: httpx.get(f"{server}/catalogs/pets").status_code == 200,
            ),
        ]
        for name, arguments, unchanged in cases:
            kept = await call(client, name, **arguments)
            assert kept["confirmed"] is False and kept["changed"] is False, (name, kept)
            assert "confirmation_token" not in kept
            assert unchanged(), name
            done = await call(client, name, **arguments)
            assert not done["is_error"] and "confirmed" not in done, (name, done)
            assert not unchanged(), name
    assert len(asked) == 8 and not answers
    assert asked[0].startswith(f"workflow.delete: Delete the saved workflow '{CHEAPEST}'")
    assert asked[2].startswith("workflow.purge_history: Delete 1 ended run(s)")
    assert asked[4].startswith(f"workflow.cancel: Cancel run '{run_id}'")
    assert asked[6].startswith("catalog.remove: Remove the catalog 'pets'")


@pytest.mark.parametrize("mode", MODES)
async def test_without_elicitation_the_first_call_previews_and_only_the_token_acts(
    server: str, travel_root: Path, mode: str
) -> None:
    ended_runs(server, 1)
    run_id = waiting_run(server)
    source = import_pets(travel_root)
    async with mcp_client(server, mode=mode) as client:
        imported = await call(client, "catalog.import_openapi", source=source, catalog="pets")
        assert not imported["is_error"], imported
        cases: list[tuple[str, dict[str, Any], dict[str, Any], Callable[[], bool]]] = [
            (
                "workflow.delete",
                {"workflow_id": CHEAPEST},
                {"workflow_id": "book_with_approval"},
                lambda: (
                    workflow_exists(server, CHEAPEST)
                    and workflow_exists(server, "book_with_approval")
                ),
            ),
            (
                "workflow.purge_history",
                {"workflow_id": "book_flight"},
                {"all": True},
                lambda: total_runs(server) == 2,  # the ended run and the waiting one
            ),
            (
                "workflow.cancel",
                {"run_id": run_id},
                {"operation_id": run_id},
                lambda: run_status(server, run_id) == "waiting_input",
            ),
            (
                "catalog.remove",
                {"catalog": "pets"},
                {"catalog": "pets", "remove_manifest": True},
                lambda: httpx.get(f"{server}/catalogs/pets").status_code == 200,
            ),
        ]
        for name, arguments, changed, unchanged in cases:
            first = await call(client, name, **arguments)
            assert first["confirmation_required"] is True and first["changed"] is False, first
            assert first["summary"] and first["expires_at"]
            assert "confirmation_token" in first["message"]
            token = first["confirmation_token"]
            other = await call(client, name, **changed, confirmation_token=token)
            forged = await call(client, name, **arguments, confirmation_token=token[:-2] + "xx")
            assert refused(other), (name, other)
            assert refused(forged), (name, forged)
            assert unchanged(), name
            done = await call(client, name, **arguments, confirmation_token=token)
            assert not done["is_error"], (name, done)
            assert not unchanged(), name
    assert run_status(server, run_id) == "cancelled"


@pytest.mark.parametrize("mode", MODES)
async def test_an_expired_token_changes_nothing(
    server: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with mcp_client(server, mode=mode) as client:
        first = await call(client, "workflow.delete", workflow_id=CHEAPEST)
        later = time.time() + 301  # past MCP_CONFIRMATION_TTL_S (300 s by default)
        monkeypatch.setattr(confirmation, "_now", lambda: later)
        late = await call(
            client,
            "workflow.delete",
            workflow_id=CHEAPEST,
            confirmation_token=first["confirmation_token"],
        )
    assert refused(late) and "expired" in late["message"], late
    assert workflow_exists(server, CHEAPEST)


@pytest.mark.parametrize("mode", MODES)
async def test_a_token_of_another_principal_changes_nothing(
    start_server: Callable[..., str], mode: str
) -> None:
    url = start_server(api_token=ADMIN_TOKEN)
    keys = []
    for name in ("ops-a", "ops-b"):
        made = httpx.post(
            f"{url}/keys", json={"name": name, "scopes": ["admin"]}, headers=bearer(ADMIN_TOKEN)
        )
        assert made.status_code == 201, made.text
        keys.append(bearer(str(made.json()["key"])))
    a, b = keys
    async with mcp_client(url, headers=a, mode=mode) as alice:
        first = await call(alice, "workflow.delete", workflow_id=CHEAPEST)
        token = first["confirmation_token"]
        async with mcp_client(url, headers=b, mode=mode) as bob:
            foreign = await call(
                bob, "workflow.delete", workflow_id=CHEAPEST, confirmation_token=token
            )
        assert refused(foreign), foreign
        assert workflow_exists(url, CHEAPEST, a)
        done = await call(alice, "workflow.delete", workflow_id=CHEAPEST, confirmation_token=token)
    assert not done["is_error"], done
    assert not workflow_exists(url, CHEAPEST, a)


async def test_a_legacy_token_is_bound_to_its_session(server: str) -> None:
    async with mcp_client(server) as first_session:
        first = await call(first_session, "workflow.delete", workflow_id=CHEAPEST)
    async with mcp_client(server) as second_session:
        other = await call(
            second_session,
            "workflow.delete",
            workflow_id=CHEAPEST,
            confirmation_token=first["confirmation_token"],
        )
    assert refused(other), other
    assert workflow_exists(server, CHEAPEST)


async def test_dry_run_still_only_previews(server: str) -> None:
    async with mcp_client(server, mode=MODERN) as client:
        dry = await call(client, "workflow.delete", workflow_id=CHEAPEST, dry_run=True)
        first = await call(client, "workflow.delete", workflow_id=CHEAPEST)
        dry_with_token = await call(
            client,
            "workflow.delete",
            workflow_id=CHEAPEST,
            dry_run=True,
            confirmation_token=first["confirmation_token"],
        )
    assert dry["dry_run"] is True and dry["changed"] is False and "confirmation_token" not in dry
    assert dry_with_token["dry_run"] is True
    assert workflow_exists(server, CHEAPEST)


async def test_over_stdio_the_token_confirms(travel_root: Path, tmp_path: Path) -> None:
    params = stdio_params(travel_root, tmp_path)
    if os.environ.get("PYTHONPATH"):  # the code under test, when it is not the installed one
        params.env = {**(params.env or {}), "PYTHONPATH": os.environ["PYTHONPATH"]}
    async with Client(params, mode="legacy") as client:
        first = await call(client, "workflow.delete", workflow_id=CHEAPEST)
        assert first["confirmation_required"] is True, first
        changed = await call(
            client,
            "workflow.delete",
            workflow_id="book_with_approval",
            confirmation_token=first["confirmation_token"],
        )
        done = await call(
            client,
            "workflow.delete",
            workflow_id=CHEAPEST,
            confirmation_token=first["confirmation_token"],
        )
        gone = await call(client, "workflow.get", workflow_id=CHEAPEST)
        kept = await call(client, "workflow.get", workflow_id="book_with_approval")
    assert refused(changed), changed
    assert not done["is_error"], done
    assert gone["is_error"] and gone["error_code"] == "NOT_FOUND"
    assert not kept["is_error"]
