"""What the OpenAPI document promises, checked on the cases the issue named.

405 answers carry the full ``Allow`` list, an unreadable body answers a documented 400, the
statuses routes answer are documented with the error model, and constraints the code enforces
are in the schema (so a schema-valid request is not refused by request validation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.api.responses import ErrorBody
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client


async def test_405_lists_every_method_the_path_serves(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(create_app(make_settings())) as client:
        tools = await client.request("OPTIONS", "/tools")
        reload_ = await client.request("PATCH", "/tools/_reload")
        one = await client.request("PATCH", "/tools/search_flights")
    assert tools.status_code == 405 and tools.headers["allow"] == "GET, POST"
    assert reload_.status_code == 405 and reload_.headers["allow"] == "POST"  # concrete path
    assert one.headers["allow"] == "DELETE, GET, PUT"
    assert tools.json()["error_code"] == "method_not_allowed"


async def test_a_body_that_is_not_utf8_json_answers_a_documented_400(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(create_app(make_settings())) as client:
        answer = await client.post(
            "/workflows/validate", content=b"\x80abc", headers={"content-type": "application/json"}
        )
        document = (await client.get("/openapi.json")).json()
    assert answer.status_code == 400
    assert ErrorBody.model_validate(answer.json()).error_code == "invalid_input"
    assert "400" in document["paths"]["/workflows/validate"]["post"]["responses"]


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/tools/{name}", "get", {"404", "422"}),
        ("/tools", "post", {"400", "409", "413", "422"}),
        ("/workflows/{workflow_id}", "delete", {"404", "409", "422"}),
        ("/runs/{run_id}/cancel", "post", {"404", "409"}),
        ("/runs/recover", "post", {"409", "422"}),
        ("/catalogs/{name}/enabled", "patch", {"404", "422"}),
    ],
)
async def test_error_statuses_are_documented_with_the_error_model(
    make_settings: Callable[..., Settings], path: str, method: str, statuses: set[str]
) -> None:
    async with app_client(create_app(make_settings())) as client:
        document = (await client.get("/openapi.json")).json()
    responses = document["paths"][path][method]["responses"]
    assert statuses <= set(responses)
    for status in statuses:
        schema = responses[status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"}


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"until": "0.5"}, 422),  # was accepted as a Unix timestamp
        ({"since": "2026-12-01"}, 422),
        ({"until": "2026-12-01T09:30:00+02:00"}, 200),
        ({"since": "0001-01-01T00:00:00+05:00"}, 200),  # before the calendar in UTC: its start
        ({"offset": str(2**80)}, 422),  # was a 500 (integer overflow in the database)
    ],
)
async def test_run_filters_accept_what_the_schema_says(
    make_settings: Callable[..., Settings], params: dict[str, str], status: int
) -> None:
    async with app_client(create_app(make_settings())) as client:
        answer = await client.get("/runs", params=params)
    assert answer.status_code == status, answer.text


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user_instructions": "x", "tool_ids": [""]}, "body.tool_ids"),
        ({"user_instructions": "x", "tool_ids": ["a"], "format_response": 0}, "body"),
    ],
)
async def test_pipeline_bodies_the_schema_refuses_are_refused(
    make_settings: Callable[..., Settings], body: dict[str, Any], field: str
) -> None:
    async with app_client(create_app(make_settings())) as client:
        answer = await client.post("/workflow", json=body)
        schema = (await client.get("/openapi.json")).json()["components"]["schemas"]
    assert answer.status_code == 422
    assert answer.json()["violations"][0]["path"].startswith(field)
    assert schema["WorkflowRequest"]["properties"]["tool_ids"]["items"]["pattern"] == r"\S"
