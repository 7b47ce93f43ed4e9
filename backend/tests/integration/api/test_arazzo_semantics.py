"""Arazzo semantics end to end: a document using each feature is imported over REST (strict
mode) and run through the real engine against a real loopback API.

The document (tests/fixtures/arazzo/semantics/shop.arazzo.yaml) has an operationId, a
``$sourceDescriptions`` operationId and an operationPath step; a workflow depending on another
(``dependsOn``, read by ``$workflows``); path, query (a reusable component), header and cookie
parameters; a payload with replacements; ``$inputs``, ``$steps``, ``$response.body#/..``,
``$response.header``, ``$statusCode``, ``$method``, ``$url`` and ``{$...}`` inside strings;
simple, regex, jsonpath and xpath criteria; a forward goto on failure, a goto back (a poll
loop), a retry with retryAfter and retryLimit, an end from a reusable action; outputs.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mocked_runs import wait_for
from tests.support.servers import serve
from tests.support.shop_api import Shop, serving_shop

SEMANTICS = Path(__file__).resolve().parents[2] / "fixtures" / "arazzo" / "semantics"


@pytest.fixture
def shop() -> Iterator[tuple[Shop, str]]:
    with serving_shop() as served:
        yield served


@pytest.fixture
async def client(
    tmp_path: Path, make_settings: Any, shop: tuple[Shop, str]
) -> AsyncIterator[httpx.AsyncClient]:
    _, url = shop
    settings: Settings = make_settings(
        registry_config_path=tmp_path / "root" / "config.yaml",
        allowed_target_hosts=[url.split("://")[1]],
    )
    shutil.copytree(SEMANTICS, settings.registry_root / "semantics")
    async with app_client(create_app(settings)) as api:
        imported = await api.post(
            "/catalogs",
            json={
                "source": str(settings.registry_root / "semantics" / "shop.arazzo.yaml"),
                "name": "shop",
                "base_url": f"{url}/api",
            },
        )
        assert imported.status_code == 201, imported.text
        assert imported.json()["workflows"] == ["login", "buy"]
        yield api


async def _buy(client: httpx.AsyncClient, item: str) -> dict[str, Any]:
    params = {"user": "ada", "password": "pw", "itemId": item, "quantity": 2}
    started = await client.post("/workflows/buy/runs", json={"params": params})
    assert started.status_code == 202, started.text
    return await wait_for(client, started.json()["run_id"], timeout_s=20)


async def test_a_purchase_runs_every_kind_of_step_and_expression(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    api, url = shop
    run = await _buy(client, "I1")
    assert run["status"] == "succeeded", run.get("error")
    assert run["result"] == {
        "orderId": "O-1",
        "price": 25.5,
        "status": "done",
        "location": "/orders/O-1",
        "method": "GET",
        "url": f"{url}/api/items/I1",
        "missing": None,  # the step a 404 leads to did not run
    }
    calls = [(r["method"], r["path"]) for r in api.requests]
    assert calls == [
        ("POST", "/sessions"),  # dependsOn: login first
        ("GET", "/items/I1"),
        ("POST", "/orders"),
        ("GET", "/warehouse"),  # 503, retried after retryAfter
        ("GET", "/warehouse"),
        ("GET", "/orders/O-1"),  # pending: the goto back polls again
        ("GET", "/orders/O-1"),
        ("GET", "/orders/O-1"),
        ("GET", "/orders/O-1/receipt"),  # then end: report-missing never runs
    ]
    item = api.requests[1]
    assert item["query"] == {"lang": "en"}  # the component's value, overridden by the step
    assert item["headers"]["x-token"] == "Bearer T-42"
    assert item["cookies"] == {"session": "S-7"}
    assert api.requests[2]["body"] == '{"item":"I1","quantity":2,"note":{"text":"for ada"}}'
    # the goto back reads the body, so the step keeps it (as _body) for its branch
    assert run["nodes"]["poll"]["output"]["status"] == "done"
    assert run["nodes"]["poll"]["output"]["_body"] == {"id": "O-1", "status": "done"}
    assert run["nodes"]["report_missing"]["status"] == "skipped"


async def test_an_unknown_item_goes_to_the_failure_step(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    api, _ = shop
    run = await _buy(client, "I9")
    assert run["status"] == "succeeded", run.get("error")
    assert run["result"]["missing"] is True
    assert run["result"]["orderId"] is None
    assert [r["path"] for r in api.requests] == ["/sessions", "/items/I9", "/missing"]
    assert run["nodes"]["get_item"]["status"] == "failed"
    assert api.requests[2]["body"] == '{"itemId":"I9"}'


async def test_a_step_calls_a_workflow_of_another_arazzo_document(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    api, url = shop
    root = Path((await client.get("/catalogs/shop")).json()["source"]).parent
    imported = await client.post(
        "/catalogs",
        json={
            "source": str(root / "orders.arazzo.yaml"),
            "name": "orders",
            "base_url": f"{url}/api",
        },
    )
    assert imported.status_code == 201, imported.text
    # the named document's workflows come along, as <source>_<id>
    assert imported.json()["workflows"] == ["check_order", "flows_login", "flows_buy"]
    started = await client.post(
        "/workflows/check_order/runs",
        json={"params": {"user": "ada", "password": "pw", "orderId": "O-1"}},
    )
    assert started.status_code == 202, started.text
    run = await wait_for(client, started.json()["run_id"], timeout_s=20)
    assert run["status"] == "succeeded", run.get("error")
    assert run["result"] == {"token": "T-42", "status": "pending"}
    assert [(r["method"], r["path"]) for r in api.requests] == [
        ("POST", "/sessions"),  # the other document's login workflow, as a sub-workflow
        ("GET", "/orders/O-1"),
    ]
    assert api.requests[0]["body"] == '{"user":"ada","password":"pw"}'


async def test_workflow_ids_defined_elsewhere_are_a_conflict_and_nothing_is_written(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    _, url = shop
    source = (await client.get("/catalogs/shop")).json()["source"]
    options = {"source": source, "name": "shop2", "base_url": f"{url}/api"}
    preview = (await client.post("/catalogs/preview", json=options)).json()
    assert {
        "workflow": "login",
        "name": "login",
        "kind": "workflow",
        "existing": "workflows/shop.arazzo.yaml",
        "existing_kind": "workflow_file",
        "existing_name": "workflows/shop.arazzo.yaml",
        "overwrite_resolves": False,
        "how": "leave the workflow out, or rename or remove it in workflows/shop.arazzo.yaml",
    } in preview["conflicts"]
    refused = await client.post("/catalogs", json=options)
    assert refused.status_code == 409, refused.text
    assert "workflow 'login', already defined by workflows/shop.arazzo.yaml" in refused.text
    assert (await client.get("/catalogs/shop2")).status_code == 404
    tools = (await client.get("/tools")).json()
    assert not [t for t in tools["tools"] if t["name"].startswith("shop2_")]


async def test_a_document_and_its_sources_are_fetched_by_url_through_the_guard(
    tmp_path: Path, make_settings: Any, shop: tuple[Shop, str]
) -> None:
    _, shop_url = shop
    files = Starlette(routes=[Mount("/docs", app=StaticFiles(directory=SEMANTICS))])
    with serve(files) as docs_url:
        settings: Settings = make_settings(
            registry_config_path=tmp_path / "root" / "config.yaml",
            allowed_target_hosts=[shop_url.split("://")[1], docs_url.split("://")[1]],
        )
        async with app_client(create_app(settings)) as api:
            # the OpenAPI source is read next to the document, by URL, through the same guard
            imported = await api.post(
                "/catalogs",
                json={
                    "source": f"{docs_url}/docs/shop.arazzo.yaml",
                    "name": "shop",
                    "base_url": f"{shop_url}/api",
                },
            )
            assert imported.status_code == 201, imported.text
            assert imported.json()["workflows"] == ["login", "buy"]
            # a source the guard refuses (a private address not allowed) is named, not read
            moved = await api.post(
                "/catalogs/preview",
                json={
                    "source": f"{docs_url}/docs/shop.arazzo.yaml",
                    "name": "other",
                    "sources": {"shop": "http://10.0.0.1/shop.openapi.yaml"},
                },
            )
    assert moved.status_code == 200, moved.text
    problems = moved.json()["violations"]
    assert problems and problems[0]["path"] == "sourceDescriptions.shop"
    assert problems[0]["rule"] == "source_not_read" and "10.0.0.1" in problems[0]["message"]
