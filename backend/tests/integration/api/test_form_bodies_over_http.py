"""Form and multipart tools over real HTTP, through every caller of the shared invoker.

A loopback API (``tests/support/form_api.py``) records each request's raw bytes and
Content-Type. Its token endpoint echoes the form it got, the client secret included: the
secret (a tool secret in ``SECRETS_DIR``, referenced as ``client_secret: secret:CLIENT_SECRET``
in the tool's static body) must reach the API, and appear in no answer, run, event or log.

- the single-shot pipeline (``POST /workflow``) with a scripted model calls the form tool;
- a workflow run gets a token with a form request (client_credentials), then calls an API with
  ``Authorization: Bearer $token.access_token`` as a header parameter;
- a workflow run uploads a file part taken from a run param (multipart).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote_plus

import httpx
import pytest
from loguru import logger

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import TEST_API_KEY
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.form_api import ACCESS_TOKEN, CLIENT_ID, CLIENT_SECRET, FormApi
from tests.support.mcp_client import MODERN, mcp_client
from tests.support.runs_over_http import run_to_end
from tests.support.servers import serve

TOOLS = """
- name: get_token
  description: Get an access token for the API (OAuth client credentials)
  api:
    method: POST
    base_url: "API_URL"
    path: /oauth/token
    content_type: application/x-www-form-urlencoded
  parameters:
    scope: {type: string, in: body, description: Space-separated scopes}
  static_params:
    body:
      grant_type: client_credentials
      client_id: dt-client
      client_secret: "secret:CLIENT_SECRET"
- name: whoami
  description: Who the token belongs to
  api: {method: GET, base_url: "API_URL", path: /me}
  parameters:
    Authorization: {type: string, in: header, required: true}
- name: upload_file
  description: Upload a file with a title and metadata
  api:
    method: POST
    base_url: "API_URL"
    path: /upload
    content_type: multipart/form-data
  parameters:
    file: {type: string, format: binary, in: body, required: true}
    title: {type: string, in: body}
    meta: {type: object, in: body}
"""

WORKFLOWS = """
domain: forms
version: "1"
workflows:
  token_then_call:
    description: Get a token with a form request, then call the API with it
    graph:
      token:
        call: get_token
        args: {scope: "read write"}
        output: token
      me:
        call: whoami
        depends_on: [token]
        args: {Authorization: "Bearer $token.access_token"}
        output: me
  upload:
    description: Upload the given document
    params:
      document: {type: dict, required: true}
      title: {type: str, required: true}
    graph:
      send:
        call: upload_file
        args: {file: "$document", title: "$title", meta: {source: run}}
        output: uploaded
"""


@pytest.fixture
def api() -> Iterator[tuple[FormApi, str]]:
    form_api = FormApi()
    with serve(form_api.app()) as url:
        yield form_api, url


@pytest.fixture
def server(
    tmp_path: Path,
    api: tuple[FormApi, str],
    make_settings: Callable[..., Settings],
    fake_llm: FakeLLM,
) -> Iterator[str]:
    _, api_url = api
    root = tmp_path / "forms-registry"
    (root / "tools").mkdir(parents=True)
    (root / "workflows").mkdir()
    (root / "tools" / "forms.yaml").write_text(TOOLS.replace("API_URL", api_url))
    (root / "workflows" / "forms.yaml").write_text(WORKFLOWS)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "CLIENT_SECRET").write_text(CLIENT_SECRET)
    settings = make_settings(
        registry_config_path=root / "config.yaml",
        secrets_dir=secrets,
        allowed_target_hosts=[api_url.removeprefix("http://")],
        openai_base_url=fake_llm.base_url,
        openai_api_key=TEST_API_KEY,
        enable_demo_api=False,
    )
    with serve(create_app(settings), port=settings.port) as url:
        yield url


@pytest.fixture
def logs() -> Iterator[list[str]]:
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m)), level="DEBUG", format="{message} {extra}")
    yield lines
    logger.remove(sink)


def no_secret(text: str) -> bool:
    return CLIENT_SECRET not in text and quote_plus(CLIENT_SECRET) not in text


def events(url: str, run_id: str) -> str:
    with httpx.stream("GET", f"{url}/runs/{run_id}/events", timeout=30) as answer:
        return "".join(answer.iter_text())


def test_the_pipeline_sends_a_form_tool_and_masks_its_secret(
    server: str, api: tuple[FormApi, str], fake_llm: FakeLLM, logs: list[str]
) -> None:
    form_api, _ = api
    fake_llm.script(tool_call("get_token", {"scope": "read"}))
    answer = httpx.post(
        f"{server}/workflow",
        json={"user_instructions": "get me a token", "tool_ids": ["get_token"]},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["status"] == "success", data
    (sent,) = form_api.requests("/oauth/token")
    assert sent.content_type == "application/x-www-form-urlencoded"
    assert parse_qsl(sent.body.decode()) == [
        ("grant_type", "client_credentials"),
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
        ("scope", "read"),
    ]
    spec = data["http_spec"]
    assert spec["content_type"] == "application/x-www-form-urlencoded"
    assert spec["body"] == {
        "grant_type": "client_credentials",
        "client_id": CLIENT_ID,
        "client_secret": "***",
        "scope": "read",
    }
    raw = data["raw_response"]["body"]
    assert raw["access_token"] == ACCESS_TOKEN and "client_secret=***" in raw["you_sent"]
    assert no_secret(answer.text)
    # the model was shown the field as fixed and authenticated, never the reference's value
    assert no_secret(json.dumps(fake_llm.requests))
    assert no_secret("\n".join(logs))


def test_a_run_gets_a_form_token_then_calls_with_the_bearer_header(
    server: str, api: tuple[FormApi, str], logs: list[str]
) -> None:
    form_api, _ = api
    run = run_to_end(server, "token_then_call", {})
    assert run["status"] == "succeeded", run
    (token,) = form_api.requests("/oauth/token")
    assert token.method == "POST"
    assert token.content_type == "application/x-www-form-urlencoded"
    assert token.body == (
        b"grant_type=client_credentials&client_id=dt-client&client_secret="
        + quote_plus(CLIENT_SECRET).encode()
        + b"&scope=read+write"
    )
    (me,) = form_api.requests("/me")
    assert me.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert me.body == b""
    assert run["nodes"]["me"]["status"] == "succeeded"
    shown = {
        "run": json.dumps(run),
        "runs": httpx.get(f"{server}/runs").text,
        "events": events(server, run["run_id"]),
        "logs": "\n".join(logs),
    }
    assert "client_secret=***" in shown["run"]  # the echo was recorded, masked
    assert {where: no_secret(text) for where, text in shown.items()} == dict.fromkeys(shown, True)


def test_a_run_uploads_a_file_part_from_a_run_param(server: str, api: tuple[FormApi, str]) -> None:
    form_api, _ = api
    document = {"filename": "notes.txt", "content_type": "text/plain", "content": "hello, file"}
    run = run_to_end(server, "upload", {"document": document, "title": "Notes"})
    assert run["status"] == "succeeded", run
    (sent,) = form_api.requests("/upload")
    assert sent.content_type.startswith("multipart/form-data; boundary=")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {sent.content_type}\r\n\r\n".encode() + sent.body
    )
    parts = [
        (
            part.get_param("name", header="content-disposition"),
            part.get_filename(),
            part.get("content-type"),
            part.get_payload(decode=True),
        )
        for part in message.iter_parts()
    ]
    assert parts == [
        ("file", "notes.txt", "text/plain", b"hello, file"),
        ("title", None, None, b"Notes"),
        ("meta", None, "application/json", b'{"source":"run"}'),
    ]
    answered = run["nodes"]["send"]
    assert answered["status"] == "succeeded"
    assert '"filename": "notes.txt"' in json.dumps(run)


async def test_an_mcp_tool_call_sends_the_form_and_masks_the_echo(
    server: str, api: tuple[FormApi, str]
) -> None:
    form_api, _ = api
    async with mcp_client(server, mode=MODERN) as client:
        result = await client.call_tool("get_token", {"scope": "mcp"})
    assert not result.is_error, result
    (sent,) = form_api.requests("/oauth/token")
    assert dict(parse_qsl(sent.body.decode()))["scope"] == "mcp"
    shown = json.dumps(result.model_dump(mode="json"))
    assert ACCESS_TOKEN in shown and "client_secret=***" in shown and no_secret(shown)
    # the file field of the upload tool takes a string or a file object
    async with mcp_client(server, mode=MODERN) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    file_schema = tools["upload_file"].input_schema["properties"]["file"]
    assert file_schema["anyOf"][1]["properties"]["content_base64"]["type"] == "string"


def test_a_bad_file_value_fails_the_run_naming_the_field(
    server: str, api: tuple[FormApi, str]
) -> None:
    form_api, _ = api
    run = run_to_end(server, "upload", {"document": {"filename": "x"}, "title": "T"})
    assert run["status"] == "failed"
    assert "file" in run["nodes"]["send"]["error"]
    assert form_api.requests("/upload") == []  # nothing was sent


@pytest.mark.parametrize(
    ("api", "extra", "expected"),
    [
        ({"method": "GET", "content_type": "application/x-www-form-urlencoded"}, {}, "GET"),
        (
            {"method": "POST", "content_type": "multipart/form-data"},
            {"graphql": {"document": "query { a }"}},
            "GraphQL",
        ),
    ],
)
def test_a_content_type_that_cannot_be_sent_is_a_422_naming_the_field(
    server: str, api: dict[str, Any], extra: dict[str, Any], expected: str
) -> None:
    tool = {
        "name": "bad_form",
        "description": "d",
        "api": {"base_url": "https://x.example", "path": "/t", **api},
        **extra,
    }
    answer = httpx.post(f"{server}/tools", json=tool)
    assert answer.status_code == 422, answer.text
    [violation] = answer.json()["violations"]
    assert violation["path"] == "api.content_type" and expected in violation["message"]


def test_a_form_tool_round_trips_through_the_tools_api(server: str) -> None:
    tool = {
        "name": "another_token",
        "description": "d",
        "api": {
            "method": "POST",
            "base_url": "https://x.example",
            "path": "/t",
            "content_type": "application/x-www-form-urlencoded",
        },
        "static_params": {"body": {"client_secret": "secret:OTHER_SECRET"}},
    }
    created = httpx.post(f"{server}/tools", json=tool)
    assert created.status_code == 201, created.text
    shown = httpx.get(f"{server}/tools/another_token").json()
    assert shown["api"]["content_type"] == "application/x-www-form-urlencoded"
    assert shown["static_params"]["body"] == {"client_secret": "secret:OTHER_SECRET"}
    literal = {**tool, "name": "literal_token", "static_params": {"body": {"client_secret": "x9"}}}
    refused = httpx.post(f"{server}/tools", json=literal)
    assert refused.status_code == 422
    assert refused.json()["violations"][0]["path"] == "static_params.body.client_secret"
