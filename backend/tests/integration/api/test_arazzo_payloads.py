"""Whole-body Arazzo payloads: ``payload: $inputs.order`` is the request body, end to end.

A workflow of the shop document (tests/fixtures/arazzo/semantics) sends an input object as
the body of ``createOrder`` (a replacement setting one property over it), another sends a
previous step's output as the body. Imported over REST in strict mode and run against a
loopback API: the body on the wire is the object; a body that does not fit the operation's
request schema fails the step naming the property, before anything is sent; the export
writes the payload back as one expression.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mocked_runs import wait_for
from tests.support.shop_api import Shop, serving_shop, shop_document

WHOLE_BODIES = """
  - workflowId: order-as-given
    inputs:
      type: object
      required: [order]
      properties:
        order: {type: object}
        quantity: {type: integer, default: 1}
    steps:
      - stepId: place
        operationId: createOrder
        requestBody:
          contentType: application/json
          payload: $inputs.order
          replacements:
            - target: /quantity
              value: $inputs.quantity
        successCriteria:
          - condition: $statusCode == 201
        outputs:
          id: $response.body#/id
    outputs:
      id: $steps.place.outputs.id
  - workflowId: reorder
    steps:
      - stepId: item
        operationPath: "{$sourceDescriptions.shop.url}#/paths/~1items~1{itemId}/get"
        parameters:
          - name: itemId
            in: path
            value: I1
          - reference: $components.parameters.lang
          - {name: X-Token, in: header, value: T}
          - {name: session, in: cookie, value: S}
        outputs:
          order: $response.body#/reorder
      - stepId: place
        operationId: createOrder
        requestBody:
          payload: "{$steps.item.outputs.order}"
"""


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
    document = shop_document(settings.registry_root / "bodies", workflows=WHOLE_BODIES.lstrip("\n"))
    async with app_client(create_app(settings)) as api:
        imported = await api.post(
            "/catalogs",
            json={"source": str(document), "name": "shop", "base_url": f"{url}/api"},
        )
        assert imported.status_code == 201, imported.text
        assert imported.json()["workflows"] == ["login", "buy", "order_as_given", "reorder"], (
            imported.json()["left_out"]
        )
        yield api


async def _run(client: httpx.AsyncClient, workflow: str, params: dict[str, Any]) -> Any:
    started = await client.post(f"/workflows/{workflow}/runs", json={"params": params})
    assert started.status_code == 202, started.text
    return await wait_for(client, started.json()["run_id"], timeout_s=20)


async def test_an_input_object_is_the_body_with_a_replacement_over_it(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    api, _ = shop
    order = {"item": "I1", "quantity": 9, "note": {"text": "gift"}}
    run = await _run(client, "order_as_given", {"order": order, "quantity": 2})
    assert run["status"] == "succeeded", run.get("error")
    assert run["result"] == {"id": "O-1"}
    assert [(r["method"], r["path"]) for r in api.requests] == [("POST", "/orders")]
    assert api.requests[0]["body"] == '{"item":"I1","quantity":2,"note":{"text":"gift"}}'


async def test_a_body_that_does_not_fit_the_request_schema_fails_naming_the_property(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    api, _ = shop
    run = await _run(client, "order_as_given", {"order": {"quantity": 1, "colour": "red"}})
    assert run["status"] == "failed"
    message = run["error"]["message"]
    assert "item" in message and "colour" in message, message
    assert api.requests == []  # nothing was sent


async def test_a_previous_steps_output_is_the_body_and_the_export_keeps_the_expression(
    client: httpx.AsyncClient, shop: tuple[Shop, str]
) -> None:
    api, _ = shop
    run = await _run(client, "reorder", {})
    assert run["status"] == "succeeded", run.get("error")
    assert [r["path"] for r in api.requests] == ["/items/I1", "/orders"]
    assert api.requests[1]["body"] == '{"item":"I1","quantity":1}'

    exported = await client.get("/workflows/order_as_given", params={"format": "arazzo"})
    assert exported.status_code == 200, exported.text
    document = exported.json()["arazzo"]
    document = document if isinstance(document, dict) else yaml.safe_load(document)
    step = document["workflows"][0]["steps"][0]
    assert step["requestBody"]["payload"] == "$inputs.order"
    assert step["requestBody"]["replacements"] == [
        {"target": "/quantity", "value": "$inputs.quantity"}
    ]
