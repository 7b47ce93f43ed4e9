"""Loose input types where Arazzo is loose: a string input feeding a boolean or integer query.

Arazzo does not tie an input's declared type to the parameter it feeds, and query values
travel as text. Lenient mode warns and sends the text (``verbose=true&limit=5``), the value
checked against the parameter's schema when the call is made; strict mode names both types.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mocked_runs import wait_for
from tests.support.servers import serve

OPENAPI = """
openapi: 3.1.0
info: {title: Articles, version: "1"}
paths:
  /articles:
    get:
      operationId: searchArticles
      parameters:
        - {name: q, in: query, required: true, schema: {type: string}}
        - {name: verbose, in: query, schema: {type: boolean}}
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 50}}
      responses:
        "200":
          description: found
          content:
            application/json:
              schema: {type: object, properties: {count: {type: integer}}}
"""

ARAZZO = """
arazzo: 1.0.1
info: {title: Article search, version: "1"}
sourceDescriptions:
  - {name: articles, url: ./articles.openapi.yaml, type: openapi}
workflows:
  - workflowId: search
    inputs:
      type: object
      required: [q]
      properties:
        q: {type: string}
        verbose: {type: string, description: Say more}
        limit: {type: string}
    steps:
      - stepId: search articles
        operationId: searchArticles
        parameters:
          - {name: q, in: query, value: $inputs.q}
          - {name: verbose, in: query, value: $inputs.verbose}
          - {name: limit, in: query, value: $inputs.limit}
        successCriteria:
          - condition: $statusCode == 200
        outputs:
          count: $response.body#/count
    outputs:
      count: $steps.search articles.outputs.count
"""


@pytest.fixture
def api() -> Iterator[tuple[list[dict[str, str]], str]]:
    seen: list[dict[str, str]] = []

    async def articles(request: Request) -> JSONResponse:
        seen.append(dict(request.query_params))
        return JSONResponse({"count": 3})

    with serve(Starlette(routes=[Route("/articles", articles)])) as url:
        yield seen, url


@pytest.fixture
def settings(tmp_path: Path, make_settings: Any, api: tuple[list[Any], str]) -> Settings:
    _, url = api
    made: Settings = make_settings(
        registry_config_path=tmp_path / "root" / "config.yaml",
        allowed_target_hosts=[url.split("://")[1]],
    )
    folder = made.registry_root / "articles"
    folder.mkdir(parents=True)
    (folder / "articles.openapi.yaml").write_text(OPENAPI, encoding="utf-8")
    (folder / "search.arazzo.yaml").write_text(ARAZZO, encoding="utf-8")
    return made


def _options(settings: Settings, url: str, **more: Any) -> dict[str, Any]:
    source = str(settings.registry_root / "articles" / "search.arazzo.yaml")
    return {"source": source, "name": "articles", "base_url": url, **more}


async def test_lenient_mode_warns_and_sends_the_text_checked_as_the_parameters_type(
    settings: Settings, api: tuple[list[dict[str, str]], str]
) -> None:
    seen, url = api
    async with app_client(create_app(settings)) as client:
        imported = await client.post("/catalogs", json=_options(settings, url, lenient=True))
        assert imported.status_code == 201, imported.text
        warned = [w for w in imported.json()["warnings"] if w["rule"] == "input_type"]
        assert len(warned) == 2, imported.json()["warnings"]
        assert "declared string, but the query parameter 'verbose'" in warned[0]["message"]
        assert "takes boolean" in warned[0]["message"]
        params = {"q": "arazzo", "verbose": "true", "limit": "5"}
        started = await client.post("/workflows/search/runs", json={"params": params})
        assert started.status_code == 202, started.text
        run = await wait_for(client, started.json()["run_id"], timeout_s=20)
        assert run["status"] == "succeeded", run.get("error")
        assert run["result"] == {"count": 3}
        # the typed values are taken too
        typed = {"q": "arazzo", "verbose": False, "limit": 7}
        started = await client.post("/workflows/search/runs", json={"params": typed})
        assert (await wait_for(client, started.json()["run_id"], timeout_s=20))["status"] == (
            "succeeded"
        )
        # text that spells no value of the type, or one the schema refuses: nothing is sent
        for limit in ("five", "99"):
            bad = {"q": "arazzo", "limit": limit}
            started = await client.post("/workflows/search/runs", json={"params": bad})
            failed = await wait_for(client, started.json()["run_id"], timeout_s=20)
            assert failed["status"] == "failed"
            assert "limit" in failed["error"]["message"], failed["error"]
    assert seen == [
        {"q": "arazzo", "verbose": "true", "limit": "5"},
        {"q": "arazzo", "verbose": "false", "limit": "7"},
    ]


async def test_strict_mode_names_both_types(
    settings: Settings, api: tuple[list[dict[str, str]], str]
) -> None:
    _, url = api
    async with app_client(create_app(settings)) as client:
        refused = await client.post("/catalogs", json=_options(settings, url))
    assert refused.status_code == 422, refused.text
    problems = refused.json()["violations"]
    assert {p["rule"] for p in problems} == {"input_type"}, problems
    messages = sorted(p["message"] for p in problems)
    assert "input 'limit' is declared string" in messages[0] and "takes integer" in messages[0]
    assert problems[0]["path"].startswith("workflows.0.steps.0.parameters.")
