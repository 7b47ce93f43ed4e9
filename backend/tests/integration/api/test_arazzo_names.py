"""Arazzo names as people write them: ids, inputs and outputs with spaces, end to end.

The shop document (tests/fixtures/arazzo/semantics) is rewritten with the names a person
might give: steps ``get item``, ``place order``, ``poll order``, ``report missing``, the
workflow ``log in`` (a ``dependsOn`` read by ``{$workflows.log in.outputs.token}``), the input
``item id`` and the step output ``order id``. Arazzo's expression grammar allows them (its ids
only SHOULD match ``[A-Za-z0-9_-]+``); output names MUST match ``[a-zA-Z0-9.-_]+``, so strict
mode refuses ``order id`` and lenient mode warns. Imported, the document makes exactly the
calls of the original, and a name it lacks is reported with the names it has.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mocked_runs import wait_for
from tests.support.shop_api import Shop, serving_shop, shop_document

RENAMES = [  # (as written in the fixture, as a person might write it), in this order
    ("$steps.order.outputs.orderId", "$steps.place order.outputs.order id"),
    ("$steps.order.outputs.location", "$steps.place order.outputs.location"),
    ("          orderId: $response.body#/id", "          order id: $response.body#/id"),
    ("stepId: get-item", 'stepId: "get item"'),
    ("$steps.get-item.", "$steps.get item."),
    ("stepId: order", 'stepId: "place order"'),
    ("stepId: poll", 'stepId: "poll order"'),
    ("$steps.poll.", "$steps.poll order."),
    ("stepId: report-missing", 'stepId: "report missing"'),
    ("$steps.report-missing.", "$steps.report missing."),
    ("workflowId: login", 'workflowId: "log in"'),
    ("dependsOn: [login]", 'dependsOn: ["log in"]'),
    ("$workflows.login.", "$workflows.log in."),
    (
        "required: [user, password, itemId, quantity]",
        'required: [user, password, "item id", quantity]',
    ),
    ("        itemId: {type: string}", '        "item id": {type: string}'),
    ("$inputs.itemId", "$inputs.item id"),
]


def _renamed(text: str) -> str:
    for old, new in RENAMES:
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def shop() -> Iterator[tuple[Shop, str]]:
    with serving_shop() as served:
        yield served


@pytest.fixture
def settings(tmp_path: Path, make_settings: Any, shop: tuple[Shop, str]) -> Settings:
    _, url = shop
    made: Settings = make_settings(
        registry_config_path=tmp_path / "root" / "config.yaml",
        allowed_target_hosts=[url.split("://")[1]],
    )
    shop_document(made.registry_root / "named", rewrite=_renamed)
    return made


def _options(settings: Settings, url: str, **more: Any) -> dict[str, Any]:
    source = str(settings.registry_root / "named" / "shop.arazzo.yaml")
    return {"source": source, "name": "shop", "base_url": f"{url}/api", **more}


async def test_names_with_spaces_resolve_in_every_expression_form_and_run_the_same_calls(
    settings: Settings, shop: tuple[Shop, str]
) -> None:
    api, url = shop
    async with app_client(create_app(settings)) as client:
        imported = await client.post("/catalogs", json=_options(settings, url, lenient=True))
        assert imported.status_code == 201, imported.text
        found = imported.json()
        assert found["workflows"] == ["log_in", "buy"]
        warned = {(w["rule"], w["path"]) for w in found["warnings"]}
        assert ("name_pattern", "workflows.1.steps.1.outputs.order id") in warned
        assert ("name_pattern", "workflows.1.steps.0.stepId") in warned
        params = {"user": "ada", "password": "pw", "item_id": "I1", "quantity": 2}
        started = await client.post("/workflows/buy/runs", json={"params": params})
        assert started.status_code == 202, started.text
        run = await wait_for(client, started.json()["run_id"], timeout_s=20)
    assert run["status"] == "succeeded", run.get("error")
    assert run["result"]["orderId"] == "O-1"
    assert run["result"]["status"] == "done"
    assert [(r["method"], r["path"]) for r in api.requests] == [
        ("POST", "/sessions"),
        ("GET", "/items/I1"),
        ("POST", "/orders"),
        ("GET", "/warehouse"),
        ("GET", "/warehouse"),
        ("GET", "/orders/O-1"),
        ("GET", "/orders/O-1"),
        ("GET", "/orders/O-1"),
        ("GET", "/orders/O-1/receipt"),
    ]
    assert api.requests[1]["headers"]["x-token"] == "Bearer T-42"  # {$workflows.log in…}
    assert api.requests[2]["body"] == '{"item":"I1","quantity":2,"note":{"text":"for ada"}}'
    # node ids of ours: the names with '_' for what an id cannot hold
    assert run["nodes"]["poll_order"]["output"]["status"] == "done"
    assert run["nodes"]["report_missing"]["status"] == "skipped"


async def test_strict_mode_refuses_an_output_name_outside_the_spec_pattern(
    settings: Settings, shop: tuple[Shop, str]
) -> None:
    _, url = shop
    async with app_client(create_app(settings)) as client:
        preview = (await client.post("/catalogs/preview", json=_options(settings, url))).json()
        refused = await client.post("/catalogs", json=_options(settings, url, workflows=["buy"]))
    left = {w["workflow_id"]: w for w in preview["arazzo_workflows"] if not w["imported"]}
    assert list(left) == ["buy"]  # strict: buy is left out; log in imports
    assert left["buy"]["problems"][0]["rule"] == "name_pattern"
    assert refused.status_code == 422, refused.text
    problems = refused.json()["violations"]
    assert [p["rule"] for p in problems] == ["name_pattern"], problems
    assert problems[0]["path"] == "workflows.1.steps.1.outputs.order id"
    assert "must match" in problems[0]["message"] and problems[0]["line"]


async def test_an_unknown_name_is_reported_with_the_names_the_document_has(
    settings: Settings, shop: tuple[Shop, str]
) -> None:
    _, url = shop
    document = settings.registry_root / "named" / "shop.arazzo.yaml"
    text = document.read_text(encoding="utf-8")
    document.write_text(text.replace("$steps.poll order.", "$steps.pol order."), encoding="utf-8")
    async with app_client(create_app(settings)) as client:
        checked = await client.post("/catalogs/preview", json=_options(settings, url, lenient=True))
    assert checked.status_code == 200, checked.text
    left = [w for w in checked.json()["arazzo_workflows"] if not w["imported"]]
    assert [w["workflow_id"] for w in left] == ["buy"]  # left out, with why
    problems = left[0]["problems"]
    message = problems[0]["message"]
    assert problems[0]["rule"] == "unknown_step"
    assert "no step 'pol'" in message or "no step 'pol order'" in message
    assert "'poll order'" in message and "'get item'" in message
