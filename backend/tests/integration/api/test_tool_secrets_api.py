"""Secrets belong to tools, not to the server: over the API, against a real listener.

Before, a tool with ``auth: {type: bearer, secret: env:API_TOKEN}`` sent the server's own API
token to whatever it called, an OpenAPI catalog named ``api`` got ``env:API_TOKEN`` by its
naming rule, and literal credentials in static params or the base URL were stored and shown.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES, TEST_API_KEY
from tests.support.app_client import app_client
from tests.support.servers import free_port, serve

SERVER_TOKEN = "server-API-token-7d0e5c1b"
TOOL_TOKEN = "tool-secret-for-collector-55a1"
HOSTILE = FIXTURES / "tools" / "hostile"


class Collector:
    """A listener that records the credentials it is sent (stands for an outside host)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.app = FastAPI(openapi_url=None)

        @self.app.get("/collect")
        async def collect(request: Request) -> dict[str, Any]:
            self.seen.append(request.headers.get("authorization", ""))
            self.seen.append(str(request.url.query))
            return {"ok": True}

        @self.app.get("/spec.json")
        async def spec(request: Request) -> dict[str, Any]:
            base = str(request.base_url).rstrip("/")
            return {
                "openapi": "3.0.3",
                "info": {"title": "Collector", "version": "1"},
                "servers": [{"url": base}],
                "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
                "security": [{"token": []}],
                "paths": {"/collect": {"get": {"operationId": "collect", "responses": {}}}},
            }


@pytest.fixture(scope="module")
def collector() -> Iterator[tuple[Collector, str, int]]:
    listener = Collector()
    port = free_port()
    with serve(listener.app, port=port) as url:
        yield listener, url, port


@pytest.fixture
def settings(
    tmp_path: Path, make_settings: Callable[..., Settings], collector: tuple[Collector, str, int]
) -> Settings:
    root = tmp_path / "secrets-registry"
    (root / "tools").mkdir(parents=True)
    shutil.copy(HOSTILE / "server_token.yaml", root / "tools")
    shutil.copy(HOSTILE / "literal_credentials.yaml", root / "tools")
    return make_settings(
        registry_config_path=root / "config.yaml",
        api_token=SERVER_TOKEN,
        openai_api_key=TEST_API_KEY,
        allowed_target_hosts=[f"127.0.0.1:{collector[2]}"],
    )


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    auth = {"Authorization": f"Bearer {SERVER_TOKEN}"}
    async with app_client(create_app(settings), **auth) as api:
        yield api


def collector_tool(url: str, **overrides: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": "collect",
        "description": "Send something to the collector",
        "api": {"method": "GET", "base_url": url, "path": "/collect"},
    }
    tool.update(overrides)
    return tool


async def run_workflow(client: httpx.AsyncClient, tool: str) -> dict[str, Any]:
    document = (FIXTURES / "workflows" / "hostile" / "call_one_tool.yaml").read_text()
    saved = await client.post(
        "/workflows",
        json={
            "content": document.replace("TOOL", tool),
            "file": f"call_{tool}.yaml",
            "overwrite": True,
        },
    )
    assert saved.status_code in (200, 201), saved.text
    started = await client.post("/workflows/call_tool/runs", json={"params": {}})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        run: dict[str, Any] = (await client.get(f"/runs/{run_id}")).json()
        if run["status"] in ("succeeded", "failed"):
            return run
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end")


@pytest.mark.parametrize(
    "reference", ["env:API_TOKEN", "env:OPENAI_API_KEY", "env:DATABASE_URL", "env:PATH"]
)
async def test_a_tool_may_not_name_a_server_setting_as_its_secret(
    client: httpx.AsyncClient, collector: tuple[Collector, str, int], reference: str
) -> None:
    _, url, _ = collector
    body = collector_tool(url, auth={"type": "bearer", "secret": reference})
    for answer in (
        await client.post("/tools", json=body),
        await client.put("/tools/collect", json=body),
    ):
        assert answer.status_code in (404, 422), answer.text
    created = await client.post("/tools", json=body)
    assert created.status_code == 422
    violation = created.json()["violations"][0]
    assert violation["path"] == "auth.secret" and "secret:" in violation["message"]


async def test_tool_files_naming_server_settings_or_literals_are_load_problems(
    client: httpx.AsyncClient,
) -> None:
    listed = (await client.get("/tools")).json()
    assert listed["tools"] == []
    problems = {(p["tool"], p["field"].split("].")[-1]) for p in listed["problems"]}
    assert problems == {
        ("leak_token", "auth.secret"),
        ("static_authorization", "static_params.header.Authorization"),
        ("static_query_key", "static_params.query.api_key"),
        ("userinfo_url", "api.base_url"),
    }
    assert "sk-live-literal" not in str(listed)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (
            {"static_params": {"header": {"X-API-Key": "sk-live-0009"}}},
            "static_params.header.X-API-Key",
        ),
        (
            {"static_params": {"header": {"Authorization": "Basic Ym9iOnB3"}}},
            "static_params.header.Authorization",
        ),
        (
            {"static_params": {"query": {"access_token": "sk-live-0009"}}},
            "static_params.query.access_token",
        ),
        (
            {"static_params": {"query": {"client_secret": "sk-live-0009"}}},
            "static_params.query.client_secret",
        ),
    ],
)
async def test_literal_credentials_are_refused_when_tools_are_created(
    client: httpx.AsyncClient,
    collector: tuple[Collector, str, int],
    overrides: dict[str, Any],
    field: str,
) -> None:
    _, url, port = collector
    answer = await client.post("/tools", json=collector_tool(url, **overrides))
    assert answer.status_code == 422
    assert answer.json()["violations"][0]["path"] == field
    userinfo = collector_tool(f"http://bob:sk-live-0009@127.0.0.1:{port}")
    refused = await client.post("/tools", json=userinfo)
    assert refused.status_code == 422
    assert refused.json()["violations"][0]["path"] == "api.base_url"
    assert "sk-live-0009" not in refused.text
    assert (await client.get("/tools/collect")).status_code == 404


async def test_a_tool_secret_is_sent_never_the_servers_token(
    client: httpx.AsyncClient,
    collector: tuple[Collector, str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listener, url, _ = collector
    listener.seen.clear()
    body = collector_tool(url, auth={"type": "bearer", "secret": "secret:API_TOKEN"})
    assert (await client.post("/tools", json=body)).status_code == 201
    monkeypatch.setenv("API_TOKEN", SERVER_TOKEN)  # what the finding's server had
    unset = await run_workflow(client, "collect")
    assert unset["status"] == "failed"
    assert "DT_SECRET_API_TOKEN" in unset["error"]["message"]
    assert listener.seen == []
    monkeypatch.setenv("DT_SECRET_API_TOKEN", TOOL_TOKEN)
    sent = await run_workflow(client, "collect")
    assert sent["status"] == "succeeded", sent["error"]
    assert listener.seen[0] == f"Bearer {TOOL_TOKEN}"
    assert SERVER_TOKEN not in str(listener.seen) and TEST_API_KEY not in str(listener.seen)


async def test_a_catalog_named_api_maps_into_the_tool_namespace(
    client: httpx.AsyncClient,
    collector: tuple[Collector, str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listener, url, _ = collector
    listener.seen.clear()
    monkeypatch.setenv("API_TOKEN", SERVER_TOKEN)
    imported = await client.post("/catalogs", json={"source": f"{url}/spec.json", "name": "api"})
    assert imported.status_code == 201, imported.text
    tool = (await client.get("/tools/collect")).json()
    assert tool["auth"]["secret"] == "secret:API_TOKEN"
    unset = await run_workflow(client, "collect")
    assert unset["status"] == "failed" and "DT_SECRET_API_TOKEN" in unset["error"]["message"]
    assert listener.seen == []
    monkeypatch.setenv("DT_SECRET_API_TOKEN", TOOL_TOKEN)
    sent = await run_workflow(client, "collect")
    assert sent["status"] == "succeeded", sent["error"]
    assert listener.seen[0] == f"Bearer {TOOL_TOKEN}"
    assert SERVER_TOKEN not in str(listener.seen)


async def test_every_tool_says_whether_its_secret_is_set_never_its_value(
    make_settings: Callable[..., Settings],
    registry_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    (registry_root / "tools").mkdir(parents=True, exist_ok=True)
    for name, ref in (("with_env", "secret:ENV_ONE"), ("with_file", "secret:FILE_ONE")):
        (registry_root / "tools" / f"{name}.yaml").write_text(
            f"name: {name}\ndescription: d\napi: {{method: GET, base_url: 'http://x.test'}}\n"
            f"auth: {{type: bearer, secret: '{ref}'}}\n"
        )
    (registry_root / "tools" / "open.yaml").write_text(
        "name: open\ndescription: d\napi: {method: GET, base_url: 'http://x.test'}\n"
    )
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    monkeypatch.setenv("DT_SECRET_ENV_ONE", "value-in-env-91c2")
    async with app_client(create_app(make_settings(secrets_dir=secrets_dir))) as client:
        listed = {t["name"]: t["auth"] for t in (await client.get("/tools")).json()["tools"]}
        assert listed["open"] == {"type": "none"}
        assert listed["with_env"]["set"] is True and listed["with_env"]["type"] == "bearer"
        assert listed["with_file"]["set"] is False
        assert "DT_SECRET_FILE_ONE" in listed["with_file"]["set_with"]
        (secrets_dir / "FILE_ONE").write_text("value-in-file-3b7a\n")
        one = (await client.get("/tools/with_file")).json()
        assert one["auth_status"]["set"] is True  # read now, not at start-up
        everything = (await client.get("/tools")).text + json.dumps(one)
        assert "value-in-env-91c2" not in everything and "value-in-file-3b7a" not in everything
        # What GET answers PUT accepts as is (auth_status is derived, not written).
        again = await client.put("/tools/with_file", json=one)
        assert again.status_code == 200, again.text
        forged = await client.put("/tools/with_file", json={**one, "auth_status": {"set": True}})
        assert forged.status_code == 422
        assert forged.json()["violations"][0]["path"] == "auth_status"
