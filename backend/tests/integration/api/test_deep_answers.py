"""An API answer nested 1,220 levels deep, read by criteria and outputs: a clear "too deep"
failure of the run, never an unexpected error (issue 27, item 5).

A real loopback API answers the deep JSON (and deep XML); each workflow calls it with
``rest_call`` and reads the answer one way. Before, JSONPath criteria ended the run as "unexpected
error (RecursionError…)" (the library parsed the text the HTTP sender kept), simple criteria and
outputs failed on "'a' used on a string", and ``$result == $result`` held. An answer 100 levels
deep is read as usual.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dynamic_tools.api.app import create_app
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.hostile import nested_object_json
from tests.support.mocked_runs import wait_for

DEEP = 1220
TOO_DEEP = f"too deep: the answer is nested past {MAX_VALUE_DEPTH} levels"

READERS: dict[str, dict[str, Any]] = {
    "jsonpath": {"criteria": [{"condition": "$..a", "type": "jsonpath"}]},
    "jsonpath_context": {
        "criteria": [{"condition": "$[?@.a]", "type": "jsonpath", "context": "$result"}]
    },
    "simple": {"criteria": [{"condition": "$result.a.a != null"}]},
    "simple_equality": {"criteria": [{"condition": "$result == $result"}]},
    "jsonpath_function": {"criteria": [{"condition": "jsonpath($result, '$..a')"}]},
    "regex": {"criteria": [{"condition": '"a"', "type": "regex"}]},
    "success": {"success": "$result.a"},
    "outputs": {"outputs": {"first": "$result.a"}},
    "outputs_in_text": {"outputs": {"said": "got $result"}},
}
RETRY_IF = {  # the criterion fails on purpose; retry_if reads the answer to decide
    "criteria": [{"condition": "$status == 201"}],
    "on_error": {"retry": 1, "delay": 0, "retry_on": ["criteria"], "retry_if": "$result.a != null"},
}


def document(base_url: str, depth: int) -> str:
    workflows = {
        name: {
            "graph": {
                "look": {
                    "call": "rest_call",
                    "args": {"method": "GET", "path": f"/json/{depth}"},
                    **reader,
                }
            }
        }
        for name, reader in {**READERS, "retry_if": RETRY_IF}.items()
    }
    workflows["xpath"] = {
        "graph": {
            "look": {
                "call": "rest_call",
                "args": {"method": "GET", "path": f"/xml/{depth}"},
                "criteria": [{"condition": "//a", "type": "xpath"}],
            }
        }
    }
    return json.dumps({"domain": "deep", "base_url": base_url, "workflows": workflows})


async def deep_json(request: Request) -> Response:
    depth = int(request.path_params["depth"])
    return Response(nested_object_json(depth), media_type="application/json")


async def deep_xml(request: Request) -> Response:
    depth = int(request.path_params["depth"])
    return Response("<a>" * depth + "</a>" * depth, media_type="application/xml")


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    from tests.support.servers import serve

    app = Starlette(
        routes=[Route("/json/{depth:int}", deep_json), Route("/xml/{depth:int}", deep_xml)]
    )
    with serve(app) as url:
        yield url


@pytest.fixture
async def client(
    api: str, make_settings: Callable[..., Settings]
) -> AsyncIterator[httpx.AsyncClient]:
    settings = make_settings(allowed_target_hosts=[api.split("://")[1]])
    async with app_client(create_app(settings)) as client:
        yield client


async def _run(client: httpx.AsyncClient, workflow_id: str) -> dict[str, Any]:
    started = await client.post(f"/workflows/{workflow_id}/runs", json={"params": {}})
    assert started.status_code == 202, started.text
    return await wait_for(client, started.json()["run_id"], timeout_s=20)


async def _save(client: httpx.AsyncClient, api: str, depth: int) -> None:
    saved = await client.post(
        "/workflows",
        json={"content": document(api, depth), "format": "json", "file": "deep.json"},
    )
    assert saved.status_code == 201, saved.text


@pytest.mark.parametrize("reader", [*READERS, "xpath"])
async def test_a_1220_deep_answer_fails_the_run_too_deep(
    client: httpx.AsyncClient, api: str, reader: str
) -> None:
    await _save(client, api, DEEP)
    run = await _run(client, reader)
    assert run["status"] == "failed", run
    message = run["error"]["message"]
    assert "unexpected" not in message and "RecursionError" not in message
    if reader == "xpath":  # XML is text to the sender: the criterion measures it
        assert f"too deep: $result nested past {MAX_VALUE_DEPTH} levels" in message
    else:
        assert TOO_DEEP in message
    assert run["nodes"]["look"]["status"] == "failed"


@pytest.mark.parametrize("reader", [*READERS, "xpath"])
async def test_an_answer_100_levels_deep_is_read_as_usual(
    client: httpx.AsyncClient, api: str, reader: str
) -> None:
    await _save(client, api, MAX_VALUE_DEPTH)
    run = await _run(client, reader)
    assert run["status"] == "succeeded", run["error"]


@pytest.mark.parametrize(("depth", "attempts"), [(MAX_VALUE_DEPTH, 2), (DEEP, 1)])
async def test_retry_if_retries_on_an_answer_it_reads_and_not_on_one_too_deep(
    client: httpx.AsyncClient, api: str, depth: int, attempts: int
) -> None:
    await _save(client, api, depth)
    run = await _run(client, "retry_if")
    assert run["status"] == "failed"
    assert run["nodes"]["look"]["attempts"] == attempts
    assert "success criteria not met: $status == 201" in run["error"]["message"]
