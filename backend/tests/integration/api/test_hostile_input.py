"""Bad input over REST answers 4xx naming the field, never 500 (issue 12, item 5).

Each case here answered 500 before the fix (an OverflowError, a RuntimeError, a ValueError or
a RecursionError escaping a route).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.hostile import nested_json, nested_object_json

DEEP = 10_000


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


async def _call(settings: Settings, method: str, url: str, body: Any = None) -> Any:
    async with app_client(create_app(settings)) as client:
        if body is None:
            return await client.request(method, url)
        return await client.request(method, url, json=body)


@pytest.mark.parametrize("days", ["1000000", "1e308", "inf", "-1", "nan"])
async def test_purging_history_with_an_absurd_age_names_the_field(
    settings: Settings, days: str
) -> None:
    answer = await _call(settings, "DELETE", f"/runs?older_than_days={days}")
    assert answer.status_code == 422, answer.text
    assert answer.json()["violations"][0]["path"] == "query.older_than_days"


@pytest.mark.parametrize(
    "url",
    [
        "/runs?offset=100000000000000000000000",
        "/runs/some-run/events?after=100000000000000000000000",
    ],
)
async def test_positions_past_any_integer_the_database_keeps_are_422(
    settings: Settings, url: str
) -> None:
    answer = await _call(settings, "GET", url)
    assert answer.status_code == 422, answer.text
    assert answer.json()["violations"][0]["path"].startswith("query.")


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("~nosuchuser/x.json", "invalid_path"),
        ("a\u0000b", "invalid_characters"),
        ("file:///tmp/a%00b.json", "invalid_path"),
        ("x" * 5000 + ".json", "invalid_path"),
        ("http://127.0.0.1:1:2/openapi.json", "invalid_url"),
        ("http://127.0.0.1:99999/openapi.json", "invalid_url"),
        ("http://[::1/openapi.json", "invalid_url"),
    ],
)
@pytest.mark.parametrize("route", ["/catalogs/validate", "/catalogs/preview", "/catalogs"])
async def test_catalog_sources_that_are_not_usable_paths_or_urls_name_the_source(
    settings: Settings, source: str, rule: str, route: str
) -> None:
    body = (
        {"source": source, "name": "bad"} if route != "/catalogs/validate" else {"source": source}
    )
    answer = await _call(settings, "POST", route, body)
    assert answer.status_code == 422, answer.text
    error = answer.json()
    assert error["error_code"] == "invalid_source"
    assert error["violations"][0]["path"] == "source"
    assert error["violations"][0]["rule"] == rule


async def test_a_local_openapi_json_nested_10000_deep_is_a_violation(
    settings: Settings, registry_root: Path
) -> None:
    (registry_root / "deep.json").write_text(nested_object_json(DEEP))
    answer = await _call(settings, "POST", "/catalogs/validate", {"source": "deep.json"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["valid"] is False
    violation = answer.json()["violations"][0]
    assert violation["rule"] == "max_depth" and violation["expected"] == 100
    imported = await _call(settings, "POST", "/catalogs", {"source": "deep.json", "name": "deep"})
    assert imported.status_code == 422 and imported.json()["violations"][0]["rule"] == "max_depth"


async def test_a_local_openapi_yaml_nested_100000_deep_is_a_violation_not_a_crash(
    settings: Settings, registry_root: Path
) -> None:
    # libyaml's C composer overflows the C stack on this (a segmentation fault).
    (registry_root / "deep.yaml").write_text("openapi: 3.0.3\nx: " + nested_json(100_000))
    answer = await _call(settings, "POST", "/catalogs/validate", {"source": "deep.yaml"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["violations"][0]["rule"] == "max_depth"


@pytest.mark.parametrize(
    ("content", "fmt"),
    [
        (nested_json(DEEP), "json"),
        (nested_object_json(DEEP), "json"),
        (nested_json(DEEP), "yaml"),
        ("".join(" " * i + "a:\n" for i in range(200)) + " " * 200 + "1\n", "yaml"),
        ("<workflows>" + "<a>" * DEEP + "</a>" * DEEP + "</workflows>", "xml"),
    ],
    ids=["json-array", "json-object", "yaml-flow", "yaml-block", "xml"],
)
async def test_workflow_content_nested_too_deep_is_a_max_depth_violation(
    settings: Settings, content: str, fmt: str
) -> None:
    async with app_client(create_app(settings)) as client:
        checked = await client.post("/workflows/validate", json={"content": content, "format": fmt})
        assert checked.status_code == 200, checked.text
        assert checked.json()["valid"] is False
        assert checked.json()["violations"][0]["rule"] == "max_depth"
        saved = await client.post("/workflows", json={"content": content, "format": fmt})
        assert saved.status_code == 422, saved.text
        assert saved.json()["violations"][0]["rule"] == "max_depth"
        draft = await client.post("/authoring/step-plan", json={"content": content, "format": fmt})
        assert draft.status_code == 422, draft.text


def _schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _deep_schema_text(depth: int) -> str:
    """The JSON text of :func:`_schema` (built as text: json.dumps recurses too)."""
    return '{"type":"object","properties":{"a":' * depth + '{"type":"string"}' + "}}" * depth


@pytest.mark.parametrize("depth", [200, 350])
async def test_a_tool_parameter_schema_200_levels_deep_names_the_parameter(
    settings: Settings, depth: int
) -> None:
    schema = _deep_schema_text(depth)
    tool = (
        '{"name": "deep", "description": "a deep schema", "api": {"method": "POST", '
        '"base_url": "https://api.example.com", "path": "/x"}, '
        '"parameters": {"p": {"in": "body", "allOf": [' + schema + "]}}}"
    )
    async with app_client(create_app(settings)) as client:
        created = await client.post(
            "/tools", content=tool, headers={"content-type": "application/json"}
        )
        assert created.status_code == 422, created.text
        violation = created.json()["violations"][0]
        assert violation["path"] == "parameters.p"
        assert "nested deeper than 100 levels" in violation["message"]
        assert (await client.get("/tools/deep")).status_code == 404


async def test_a_tool_output_schema_too_deep_names_the_field(settings: Settings) -> None:
    tool = {
        "name": "deep_output",
        "description": "a deep output schema",
        "api": {"method": "GET", "base_url": "https://api.example.com", "path": "/x"},
        "output_schema": _schema(200),
    }
    answer = await _call(settings, "POST", "/tools", tool)
    assert answer.status_code == 422, answer.text
    assert answer.json()["violations"][0]["path"] == "output_schema"


async def test_a_json_body_nested_past_the_decoder_is_4xx(settings: Settings) -> None:
    async with app_client(create_app(settings)) as client:
        answer = await client.post(
            "/workflows/validate",
            content=json.dumps({"content": "x"})[:-1] + ', "extra": ' + nested_json(DEEP) + "}",
            headers={"content-type": "application/json"},
        )
    assert 400 <= answer.status_code < 500, answer.text
