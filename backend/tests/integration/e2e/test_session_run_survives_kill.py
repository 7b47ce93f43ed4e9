"""A run of a session's own workflow is durable like any run: killed with -9 while it waits,
it is resumed by a server restarted on another port, and its next calls still reach the
session's API with the session's headers, which the database holds only sealed; a registry tool
it calls still gets only its own credential."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx

from tests.conftest import EXAMPLES
from tests.support.header_api import (
    FLOWS,
    PARTNER_SECRET,
    SECRET_NAME,
    SESSION_TOKEN,
    running_header_api,
)
from tests.support.mcp_client import mcp_client
from tests.support.processes import server, until
from tests.support.servers import free_port
from tests.support.team_api import TOKEN, running_team_api

PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


async def test_a_session_run_resumes_after_kill_9_with_its_headers(tmp_path: Path) -> None:
    travel = (EXAMPLES / "workflows" / "travel.yaml").read_text()
    with running_team_api({"travel.yaml": travel}) as team:
        env = {
            "DATA_DIR": str(tmp_path / "data"),
            "REGISTRY_CONFIG_PATH": str(tmp_path / "registry/config.yaml"),
            "SEED_EXAMPLES_FROM": str(EXAMPLES),
            "DURABLE_RUNS": "true",
            "EXECUTOR_ID": "session-replica",
            "ALLOWED_TARGET_HOSTS": team.host,
        }
        headers = {
            "X-Target-URL": team.openapi,
            "X-API-Name": "flights",
            "X-Target-Headers": json.dumps({"Authorization": TOKEN}),
            "X-Workflow-URL": team.document("travel.yaml"),
        }
        log = tmp_path / "server.log"
        first_port = free_port()
        with server(first_port, env, log) as first:
            async with mcp_client(f"http://127.0.0.1:{first_port}", headers=headers) as client:
                waiting = await client.call_tool("w_book_with_approval", PARAMS)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        assert waiting.structured_content["status"] == "waiting_input", waiting.content
        run_id = waiting.structured_content["run_id"]
        stored = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*.sqlite*"))
        assert b"FL-AMSBCN" in stored  # the run's databases were read
        assert b"team-secret-4c9e71" not in stored  # sealed in the run store, absent elsewhere
        assert (tmp_path / "data" / "session.key").stat().st_mode & 0o077 == 0

        second_port = free_port()  # another port: nothing of the run depends on the first
        with server(second_port, env, log):
            base = f"http://127.0.0.1:{second_port}"
            answer = {"values": {"selected_flight_id": "FL-AMSBCN-20261201-1"}}
            resumed = httpx.post(f"{base}/runs/{run_id}/resume", json=answer, timeout=10)
            assert resumed.status_code == 200, resumed.text

            def ended() -> dict[str, object] | None:
                run = httpx.get(f"{base}/runs/{run_id}", timeout=5).json()
                return run if run["status"] in {"succeeded", "failed"} else None

            run = until(ended)
    assert run["status"] == "succeeded", run
    assert [auth for path, auth in team.seen if path in ("/bookings", "/payments")] == [
        TOKEN,
        TOKEN,
    ]
    assert "team-secret" not in log.read_text()


async def test_a_resumed_session_run_keeps_its_headers_to_its_own_api(tmp_path: Path) -> None:
    # After kill -9 and a restart, the registry tool still gets only its own bearer secret,
    # the session's API only the session's headers, and each step the engine's key.
    tools = tmp_path / "registry" / "tools"
    tools.mkdir(parents=True)
    with running_header_api({"notes.yaml": FLOWS}) as partner:
        (tools / "partner_rates.yaml").write_text(partner.registry_tool())
        env = {
            "DATA_DIR": str(tmp_path / "data"),
            "REGISTRY_CONFIG_PATH": str(tmp_path / "registry/config.yaml"),
            "DURABLE_RUNS": "true",
            "EXECUTOR_ID": "header-replica",
            "ALLOWED_TARGET_HOSTS": partner.host,
            f"DT_SECRET_{SECRET_NAME}": PARTNER_SECRET,
        }
        headers = {
            "X-Target-URL": partner.openapi,
            "X-API-Name": "notes",
            "X-Target-Headers": json.dumps({"Authorization": SESSION_TOKEN, "X-Team": "blue"}),
            "X-Workflow-URL": partner.document("notes.yaml"),
        }
        log = tmp_path / "server.log"
        first_port = free_port()
        with server(first_port, env, log) as first:
            async with mcp_client(f"http://127.0.0.1:{first_port}", headers=headers) as client:
                waiting = await client.call_tool("w_approve_then_rates", {"currency": "USD"})
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        assert waiting.structured_content["status"] == "waiting_input", waiting.content
        run_id = waiting.structured_content["run_id"]
        second_port = free_port()
        with server(second_port, env, log):
            base = f"http://127.0.0.1:{second_port}"
            answer = {"values": {"go": True}}
            resumed = httpx.post(f"{base}/runs/{run_id}/resume", json=answer, timeout=10)
            assert resumed.status_code == 200, resumed.text

            def ended() -> dict[str, object] | None:
                run = httpx.get(f"{base}/runs/{run_id}", timeout=5).json()
                return run if run["status"] in {"succeeded", "failed"} else None

            run = until(ended)
    assert run["status"] == "succeeded", run
    [rates] = partner.calls("/partner")
    [note] = partner.calls("/notes")
    assert rates.only_the_partner_credential(), rates
    assert (note.one("authorization"), note.one("x-team")) == (SESSION_TOKEN, "blue")
    keys = {rates.one("idempotency-key"), note.one("idempotency-key")}
    assert None not in keys and len(keys) == 2
    assert all(str(key).startswith(run_id) for key in keys)
