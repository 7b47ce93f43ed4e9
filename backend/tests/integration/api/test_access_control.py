"""Who may do what over REST: API_TOKEN as admin, API keys with scopes, 401/403 as RFC 6750 and
the MCP authorization specification say, keys revoked or expired refused at once on every
replica, the audit log, and a one-person setup that needs nothing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from dynamic_tools.api.app import create_app
from dynamic_tools.cli.main import app as cli
from dynamic_tools.engine.local import MockTools
from dynamic_tools.persistence.db import api_keys, make_engine, utc_now, write_transaction
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.mocked_runs import travel_tools

TOKEN = "admin-token-for-access-tests-91c"
FLIGHT = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


@pytest.fixture
def guarded(tmp_path: Path, make_settings: Callable[..., Settings]) -> Settings:
    root = tmp_path / "fresh-registry"
    return make_settings(
        registry_config_path=root / "config.yaml", seed_examples_from=EXAMPLES, api_token=TOKEN
    )


@asynccontextmanager
async def server(settings: Settings, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    tools: MockTools = travel_tools()
    async with app_client(create_app(settings, tool_runner=tools), **headers) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def new_key(client: httpx.AsyncClient, name: str, *scopes: str, **extra: Any) -> str:
    made = await client.post(
        "/keys", json={"name": name, "scopes": list(scopes), **extra}, headers=bearer(TOKEN)
    )
    assert made.status_code == 201, made.text
    key: str = made.json()["key"]
    return key


async def test_a_one_person_setup_needs_no_credential(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "r" / "config.yaml", seed_examples_from=EXAMPLES
    )
    async with server(settings) as client:
        me = (await client.get("/me")).json()
        listed = await client.get("/workflows")
        deleted = await client.delete("/workflows/find_cheapest_across_dates")
    assert me == {
        "id": "admin",
        "name": "local user",
        "kind": "local",
        "scopes": ["admin", "author", "read", "run"],
        "access_control": False,
    }
    assert listed.status_code == 200 and deleted.status_code == 204


async def test_no_or_a_bad_credential_is_401_with_the_challenge(guarded: Settings) -> None:
    async with server(guarded) as client:
        missing = await client.get("/workflows")
        wrong = await client.get("/workflows", headers=bearer("not-the-token"))
        bad_key = await client.get("/workflows", headers=bearer("dtk_0123456789abcdef_" + "x" * 43))
        mcp = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        open_health = await client.get("/healthz")
    for answer in (missing, wrong, bad_key, mcp):
        assert answer.status_code == 401
        assert answer.json()["error_code"] == "unauthorized"
    challenge = missing.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource"' in challenge
    assert "error=" not in challenge  # no credential was given
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert "revoked or expired" in bad_key.json()["message"]
    assert 'oauth-protected-resource/mcp"' in mcp.headers["www-authenticate"]
    assert open_health.status_code == 200


async def test_scopes_decide_and_a_missing_one_is_403_naming_it(guarded: Settings) -> None:
    async with server(guarded) as client:
        reader = await new_key(client, "reader", "read")
        runner = await new_key(client, "runner", "read", "run")
        me = (await client.get("/me", headers=bearer(reader))).json()
        seen = await client.get("/workflows", headers=bearer(reader))
        refused = await client.post(
            "/workflows/book_flight/runs", json={"params": FLIGHT}, headers=bearer(reader)
        )
        started = await client.post(
            "/workflows/book_flight/runs", json={"params": FLIGHT}, headers=bearer(runner)
        )
        not_admin = await client.delete("/workflows/book_flight", headers=bearer(runner))
        keys_list = await client.get("/keys", headers=bearer(runner))
    assert me["kind"] == "key" and me["name"] == "reader" and me["scopes"] == ["read"]
    assert me["id"].startswith("key:") and me["access_control"] is True
    assert seen.status_code == 200
    assert refused.status_code == 403
    assert refused.json()["error_code"] == "insufficient_scope"
    assert refused.json()["context"]["scope"] == "run"
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope", scope="run"')
    assert "resource_metadata=" in challenge
    assert started.status_code == 202, started.text
    assert not_admin.status_code == 403 and not_admin.json()["context"]["scope"] == "admin"
    assert keys_list.status_code == 403


async def test_keys_are_shown_once_and_kept_only_as_a_digest(guarded: Settings) -> None:
    async with server(guarded) as client:
        key = await new_key(client, "ci", "read", "run", expires="30d")
        listed = (await client.get("/keys", headers=bearer(TOKEN))).json()["keys"]
        await client.get("/workflows", headers=bearer(key))
        used = (await client.get("/keys", headers=bearer(TOKEN))).json()["keys"]
    [entry] = listed
    assert entry["name"] == "ci" and entry["scopes"] == ["read", "run"]
    assert entry["state"] == "active" and entry["expires_at"] and entry["created_by"] == "admin"
    assert key not in str(listed) and "key" not in entry
    assert entry["last_used_at"] is None and used[0]["last_used_at"] is not None
    secret = key.split("_", 2)[2]  # the secret may hold "_" itself (URL-safe base64)
    for path in guarded.data_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


async def test_a_revoked_or_expired_key_is_refused_at_once_on_every_replica(
    guarded: Settings,
) -> None:
    # two servers on one database: what one revokes, the other refuses on the next request
    async with server(guarded) as first, server(guarded) as second:
        key = await new_key(first, "short-lived", "read")
        other = await new_key(first, "expiring", "read")
        assert (await second.get("/workflows", headers=bearer(key))).status_code == 200
        revoked = await first.delete(f"/keys/{key.split('_')[1]}", headers=bearer(TOKEN))
        after = await second.get("/workflows", headers=bearer(key))
        engine = make_engine(guarded.effective_database_url)
        with write_transaction(engine) as connection:
            connection.execute(
                update(api_keys)
                .where(api_keys.c.name == "expiring")
                .values(expires_at=utc_now() - timedelta(seconds=1))
            )
        engine.dispose()
        expired = await second.get("/workflows", headers=bearer(other))
        states = {
            k["name"]: k["state"]
            for k in (await first.get("/keys", headers=bearer(TOKEN))).json()["keys"]
        }
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert after.status_code == 401 and 'error="invalid_token"' in after.headers["www-authenticate"]
    assert expired.status_code == 401
    assert states == {"short-lived": "revoked", "expiring": "expired"}


async def test_the_first_key_turns_access_control_on(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "r" / "config.yaml", seed_examples_from=EXAMPLES
    )
    async with server(settings) as client:
        made = await client.post("/keys", json={"name": "first", "scopes": ["admin"]})
        key = made.json()["key"]
        # the "any key?" answer is trusted for two seconds: ask a fresh server
    async with server(settings) as client:
        without = await client.get("/workflows")
        with_key = await client.get("/me", headers=bearer(key))
    assert made.status_code == 201
    assert without.status_code == 401
    assert with_key.json()["access_control"] is True and with_key.json()["scopes"] == ["admin"]


async def test_authoring_and_destructive_actions_are_audited(guarded: Settings) -> None:
    async with server(guarded, **{"X-Request-ID": "corr-audit-1"}) as client:
        runner = await new_key(client, "runner", "read", "run")
        await client.delete("/workflows/book_flight", headers=bearer(runner))  # denied
        await client.delete("/workflows/find_cheapest_across_dates", headers=bearer(TOKEN))  # done
        await client.get("/workflows", headers=bearer(TOKEN))  # a read: not audited
        page = (await client.get("/audit", headers=bearer(TOKEN))).json()
        only_denied = (
            await client.get("/audit", params={"outcome": "denied"}, headers=bearer(TOKEN))
        ).json()
        refused = await client.get("/audit", headers=bearer(runner))
    actions = [(e["action"], e["target"], e["outcome"]) for e in page["entries"]]
    assert actions[:3] == [
        ("DELETE /workflows/{workflow_id}", "workflow_id=find_cheapest_across_dates", "ok"),
        ("DELETE /workflows/{workflow_id}", "workflow_id=book_flight", "denied"),
        ("POST /keys", f"key_id={runner.split('_')[1]}", "ok"),
    ]
    assert page["entries"][0]["principal"] == "admin"
    assert page["entries"][1]["principal"].startswith("key:")
    assert page["entries"][0]["correlation_id"] == "corr-audit-1"
    assert only_denied["total"] == 1
    assert refused.status_code == 403
    assert runner not in str(page)


def test_the_cli_creates_lists_and_revokes_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REGISTRY_CONFIG_PATH", str(tmp_path / "r" / "config.yaml"))
    runner = CliRunner()
    made = runner.invoke(cli, ["keys", "create", "--name", "ci", "--scopes", "read,run"])
    assert made.exit_code == 0, made.output
    key = made.output.split()[0]
    assert key.startswith("dtk_") and "shown once" in made.output
    listed = runner.invoke(cli, ["keys", "list", "--json"])
    assert key not in listed.output
    [entry] = json.loads(listed.output)
    assert entry["scopes"] == ["read", "run"] and entry["state"] == "active"
    bad = runner.invoke(cli, ["keys", "create", "--name", "x", "--scopes", "read,fly"])
    assert bad.exit_code == 1 and "unknown scope 'fly'" in bad.output
    gone = runner.invoke(cli, ["keys", "revoke", "ci"])
    assert gone.exit_code == 0 and "revoked" in gone.output
    again = runner.invoke(cli, ["keys", "list", "--json"])
    assert json.loads(again.output)[0]["state"] == "revoked"


def test_with_no_credential_at_all_the_server_listens_on_loopback_only(
    tmp_path: Path, make_settings: Callable[..., Settings], capsys: pytest.CaptureFixture[str]
) -> None:
    from dynamic_tools.cli.main import _loopback_unless_protected

    open_to_all = make_settings(host="0.0.0.0", data_dir=tmp_path / "d1")
    assert _loopback_unless_protected(open_to_all).host == "127.0.0.1"
    assert "listening on 127.0.0.1 instead of 0.0.0.0" in capsys.readouterr().err
    told = make_settings(host="0.0.0.0", allow_open_access=True, data_dir=tmp_path / "d2")
    assert _loopback_unless_protected(told).host == "0.0.0.0"
    assert "acts as admin" in capsys.readouterr().err
    tokened = make_settings(host="0.0.0.0", api_token=TOKEN, data_dir=tmp_path / "d3")
    assert _loopback_unless_protected(tokened).host == "0.0.0.0"
    keyed = make_settings(host="0.0.0.0", data_dir=tmp_path / "d4")
    engine = make_engine(keyed.effective_database_url)
    from dynamic_tools.access.keys import ApiKeyStore
    from dynamic_tools.access.principals import parse_scopes
    from dynamic_tools.persistence.db import migrate

    migrate(engine)
    ApiKeyStore(engine).create_sync(name="k", scopes=parse_scopes("read"), created_by="t")
    engine.dispose()
    assert _loopback_unless_protected(keyed).host == "0.0.0.0"


async def test_the_document_pages_need_read_like_the_table_says(guarded: Settings) -> None:
    async with server(guarded) as client:
        runner_only = await new_key(client, "runner-only", "run")
        reader = await new_key(client, "docs-reader", "read")
        refused = await client.get("/openapi.json", headers=bearer(runner_only))
        docs = await client.get("/docs", headers=bearer(runner_only))
        allowed = await client.get("/openapi.json", headers=bearer(reader))
    assert refused.status_code == docs.status_code == 403
    assert refused.json()["context"]["scope"] == "read"
    assert 'error="insufficient_scope", scope="read"' in refused.headers["www-authenticate"]
    assert allowed.status_code == 200 and "paths" in allowed.json()
