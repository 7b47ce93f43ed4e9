"""A literal credential is refused by value too, over REST: 422 naming the field, nothing written.

Before, ``static_params.body: {auth: {password: …}}``, a ``Bearer eyJ…`` value under a custom
header name and ``secret: "secret:GOOD\\n"`` were all saved.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(create_app(settings)) as api:
        yield api


def login_tool(**overrides: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": "login",
        "description": "Log in to the items API",
        "api": {"method": "POST", "base_url": "https://items.example/v1", "path": "/login"},
    }
    tool.update(overrides)
    return tool


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (
            {"static_params": {"body": {"auth": {"user": "ada", "password": "hunter2-91c2"}}}},
            "static_params.body.auth.password",
        ),
        (
            {"static_params": {"header": {"X-Custom": f"Bearer {JWT}"}}},
            "static_params.header.X-Custom",
        ),
        (
            {"static_params": {"query": {"key_id": "AKIAIOSFODNN7EXAMPLE"}}},
            "static_params.query.key_id",
        ),
        ({"auth": {"type": "bearer", "secret": "secret:GOOD\n"}}, "auth.secret"),
    ],
)
async def test_a_tool_with_a_literal_credential_is_refused_and_nothing_is_written(
    client: httpx.AsyncClient, settings: Settings, overrides: dict[str, Any], field: str
) -> None:
    before = files(settings.tools_dir)
    answer = await client.post("/tools", json=login_tool(**overrides))
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error_code"] == "invalid_tool_config"
    [violation] = body["violations"]
    assert violation["path"] == field
    assert "secret:NAME" in violation["message"]
    for value in ("hunter2-91c2", JWT, "AKIAIOSFODNN7EXAMPLE"):
        assert value not in answer.text
    assert files(settings.tools_dir) == before
    assert (await client.get("/tools/login")).status_code == 404


async def test_replacing_a_tool_with_a_literal_credential_leaves_its_file_as_it_was(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    created = await client.post("/tools", json=login_tool())
    assert created.status_code == 201, created.text
    before = files(settings.tools_dir)
    replaced = await client.put(
        "/tools/login",
        json=login_tool(static_params={"body": {"client": {"client_secret": "s3cr3t-5d2e"}}}),
    )
    assert replaced.status_code == 422
    assert replaced.json()["violations"][0]["path"] == "static_params.body.client.client_secret"
    assert "s3cr3t-5d2e" not in replaced.text
    assert files(settings.tools_dir) == before
    kept = await client.get("/tools/login")
    assert kept.status_code == 200 and "client_secret" not in kept.text


async def test_a_tool_file_with_a_literal_credential_is_listed_as_a_problem(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    (settings.tools_dir / "login.yaml").write_text(
        yaml.safe_dump(login_tool(static_params={"header": {"X-Custom": f"Bearer {JWT}"}}))
    )
    reloaded = await client.post("/tools/_reload")
    assert reloaded.status_code == 200
    listed = await client.get("/tools")
    problems = [p for p in listed.json()["problems"] if p["tool"] == "login"]
    assert [p["field"] for p in problems] == ["static_params.header.X-Custom"]
    assert JWT not in listed.text


async def test_a_workflow_with_a_literal_token_is_refused_naming_node_and_argument(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    document = {
        "domain": "creds",
        "base_url": "https://items.example/v1",
        "workflows": {
            "sign_in": {
                "params": {"token": {"type": "str"}},
                "graph": {
                    "fetch": {
                        "call": "rest_call",
                        "args": {
                            "method": "GET",
                            "path": "/me",
                            "headers": {"X-Custom": f"Bearer {JWT}", "X-Ref": "Bearer $token"},
                        },
                    }
                },
            }
        },
    }
    before = files(settings.workflows_dir) if settings.workflows_dir.is_dir() else {}
    saved = await client.post(
        "/workflows", json={"content": yaml.safe_dump(document), "file": "sign_in.yaml"}
    )
    assert saved.status_code == 422, saved.text
    errors = [v for v in saved.json()["violations"] if v["severity"] == "error"]
    assert [(v["path"], v["rule"]) for v in errors] == [
        ("workflows.sign_in.graph.fetch.args.headers.X-Custom", "literal_credential")
    ]
    assert "secret:NAME" in errors[0]["message"] and JWT not in saved.text
    after = files(settings.workflows_dir) if settings.workflows_dir.is_dir() else {}
    assert after == before
