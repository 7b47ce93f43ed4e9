"""An Arazzo OAuth flow as people write it: a form token step whose token authorises the next.

The document's first step posts ``application/x-www-form-urlencoded`` to the token endpoint
with ``client_secret: $inputs.client_secret``; the second sends ``Authorization: Bearer
{$steps.get token.outputs.access_token}`` to an API whose OpenAPI description secures it with
a bearer scheme. Imported (lenient) over REST and run against a loopback API that checks
both: the client secret travels by reference only (a tool secret, never a run value — the
import says which), the token request is a form, and the token authorises the second call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.form_api import ACCESS_TOKEN, CLIENT_ID, CLIENT_SECRET, FormApi
from tests.support.mocked_runs import wait_for
from tests.support.servers import serve

OPENAPI = """
openapi: 3.0.3
info: {title: Music, version: "1"}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
paths:
  /oauth/token:
    post:
      operationId: getToken
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: [grant_type]
              properties:
                grant_type: {type: string, enum: [client_credentials]}
                client_id: {type: string}
                client_secret: {type: string}
                scope: {type: string}
      responses:
        "200":
          description: a token
          content:
            application/json:
              schema: {type: object, properties: {access_token: {type: string}}}
  /me:
    get:
      operationId: whoAmI
      security: [{bearer: []}]
      parameters:
        - {name: Authorization, in: header, schema: {type: string}}
      responses:
        "200": {description: the caller}
"""

ARAZZO = """
arazzo: 1.0.1
info: {title: Music flows, version: "1"}
sourceDescriptions:
  - {name: music, url: ./music.openapi.yaml, type: openapi}
workflows:
  - workflowId: who am i
    inputs:
      type: object
      required: [client_id, client_secret]
      properties:
        client_id: {type: string}
        client_secret: {type: string}
    steps:
      - stepId: get token
        operationId: getToken
        requestBody:
          contentType: application/x-www-form-urlencoded
          payload:
            grant_type: client_credentials
            client_id: $inputs.client_id
            client_secret: $inputs.client_secret
            scope: read write
        successCriteria:
          - condition: $statusCode == 200
        outputs:
          access_token: $response.body#/access_token
      - stepId: me
        operationId: whoAmI
        parameters:
          - name: Authorization
            in: header
            value: "Bearer {$steps.get token.outputs.access_token}"
        successCriteria:
          - condition: $statusCode == 200
        outputs:
          user: $response.body#/user
    outputs:
      user: $steps.me.outputs.user
"""


@pytest.fixture
def api() -> Iterator[tuple[FormApi, str]]:
    form_api = FormApi()
    with serve(form_api.app()) as url:
        yield form_api, url


@pytest.fixture
def settings(tmp_path: Path, make_settings: Any, api: tuple[FormApi, str]) -> Settings:
    _, url = api
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "MUSIC_CLIENT_SECRET").write_text(CLIENT_SECRET)
    made: Settings = make_settings(
        registry_config_path=tmp_path / "root" / "config.yaml",
        allowed_target_hosts=[url.split("://")[1]],
        secrets_dir=secrets,
    )
    folder = made.registry_root / "music"
    folder.mkdir(parents=True)
    (folder / "music.openapi.yaml").write_text(OPENAPI, encoding="utf-8")
    (folder / "flows.arazzo.yaml").write_text(ARAZZO, encoding="utf-8")
    return made


async def test_the_token_step_imports_and_runs_and_its_token_authorises_the_next_call(
    settings: Settings, api: tuple[FormApi, str]
) -> None:
    form_api, url = api
    source = str(settings.registry_root / "music" / "flows.arazzo.yaml")
    options = {"source": source, "name": "music", "base_url": url, "lenient": True}
    async with app_client(create_app(settings)) as client:
        imported = await client.post("/catalogs", json=options)
        assert imported.status_code == 201, imported.text
        body = imported.json()
        assert body["workflows"] == ["who_am_i"]
        said = {w["rule"]: w["message"] for w in body["warnings"]}
        assert "secret:MUSIC_CLIENT_SECRET" in said["credential_input"]
        assert "takes it as a parameter" in said["credential_header"]
        assert [(s["secret"], s["set"]) for s in body["secrets"]] == [
            ("secret:MUSIC_CLIENT_SECRET", True)
        ]
        token_tool = (await client.get("/tools/music_getToken")).json()
        assert token_tool["api"]["content_type"] == "application/x-www-form-urlencoded"
        assert "client_secret" not in token_tool["parameters"]  # never a model's or a run's
        shown = token_tool["auth_status"]["body_secrets"]["client_secret"]
        assert shown["secret"] == "secret:MUSIC_CLIENT_SECRET" and shown["set"] is True
        listed = (await client.get("/tools")).json()["tools"]
        summary = next(t for t in listed if t["name"] == "music_getToken")
        assert summary["auth"]["body_secrets"]["client_secret"]["set"] is True
        # the input is no longer needed: a run passes no secret
        started = await client.post(
            "/workflows/who_am_i/runs", json={"params": {"client_id": CLIENT_ID}}
        )
        assert started.status_code == 202, started.text
        run = await wait_for(client, started.json()["run_id"], timeout_s=20)
        events = (await client.get(f"/runs/{run['run_id']}/events")).text
    assert run["status"] == "succeeded", run.get("error")
    assert run["result"] == {"user": "robot"}
    (token,) = form_api.requests("/oauth/token")
    assert token.content_type == "application/x-www-form-urlencoded"
    assert sorted(parse_qsl(token.body.decode())) == [
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
        ("grant_type", "client_credentials"),
        ("scope", "read write"),
    ]
    assert b"scope=read+write" in token.body  # form encoding: + for a space
    (me,) = form_api.requests("/me")
    assert me.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert CLIENT_SECRET not in json.dumps(run) and CLIENT_SECRET not in events
