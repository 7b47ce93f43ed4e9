"""/tools CRUD over the API, on a registry seeded from the shipped example (left untouched)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import yaml

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client

NEW_TOOL = {
    "name": "get_fare_rules",
    "description": "Fare rules of a flight",
    "api": {
        "method": "GET",
        "base_url": "${PUBLIC_BASE_URL}/demo/travel",
        "path": "/flights/{flight_id}/rules",
    },
    "parameters": {"flight_id": {"type": "string", "in": "path", "required": True}},
}


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


async def test_crud_on_a_seeded_registry_never_touches_the_examples(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    before = tree_digest(EXAMPLES)
    root = tmp_path / "fresh-registry"
    settings = make_settings(registry_config_path=root / "config.yaml", seed_examples_from=EXAMPLES)
    async with app_client(create_app(settings)) as client:
        listed = (await client.get("/tools")).json()
        assert len(listed["tools"]) == 10 and listed["problems"] == []

        created = await client.post("/tools", json=NEW_TOOL)
        assert created.status_code == 201, created.text
        assert created.json()["endpoint"] == (
            f"GET {settings.base_url}/demo/travel/flights/{{flight_id}}/rules"
        )
        assert (await client.post("/tools", json=NEW_TOOL)).status_code == 409

        changed = dict(NEW_TOOL, description="Fare rules and baggage allowance")
        replaced = await client.put("/tools/get_fare_rules", json=changed)
        assert replaced.status_code == 200
        assert replaced.json()["description"] == "Fare rules and baggage allowance"

        edited = yaml.safe_load((root / "tools" / "search_flights.yaml").read_text())
        edited["description"] = "Edited in the runtime copy"
        assert (await client.put("/tools/search_flights", json=edited)).status_code == 200

        bad = await client.post("/tools", json={"name": "bad name", "api": {"method": "GET"}})
        assert bad.status_code == 422
        paths = {v["path"] for v in bad.json()["violations"]}
        assert {"name", "description", "api.base_url"} <= paths
        assert (await client.get("/tools/nope")).status_code == 404
        assert (await client.delete("/tools/nope")).status_code == 404
        assert (await client.delete("/tools/get_fare_rules")).status_code == 204
        assert (await client.get("/tools/get_fare_rules")).status_code == 404

    assert not (root / "tools" / "get_fare_rules.yaml").exists()
    assert "Edited in the runtime copy" in (root / "tools" / "search_flights.yaml").read_text()
    assert tree_digest(EXAMPLES) == before


async def test_what_get_answers_put_accepts_as_is(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    root = tmp_path / "registry"
    settings = make_settings(registry_config_path=root / "config.yaml", seed_examples_from=EXAMPLES)
    async with app_client(create_app(settings)) as client:
        shown = (await client.get("/tools/search_flights")).json()
        same = await client.put("/tools/search_flights", json=shown)
        edited = {**shown, "description": "Search flights (edited from GET)"}
        changed = await client.put("/tools/search_flights", json=edited)
        forged = await client.put(
            "/tools/search_flights", json={**shown, "input_schema": {"type": "object"}}
        )
        again = (await client.get("/tools/search_flights")).json()
        copied = await client.post("/tools", json={**shown, "name": "search_flights_copy"})
        missing = await client.put("/tools/nope", json=shown)
    assert same.status_code == 200, same.text
    assert same.json() == shown  # nothing changed
    assert changed.status_code == 200 and again["description"] == "Search flights (edited from GET)"
    assert forged.status_code == 422
    assert forged.json()["violations"][0] == {
        "path": "input_schema",
        "rule": "read_only",
        "message": "derived; cannot be set",
    }
    assert copied.status_code == 422 and "endpoint" in copied.text  # a new tool: no derived fields
    assert missing.status_code == 404


async def test_a_refused_tool_says_each_problem_in_words_the_missing_first(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    """Messages once carried pydantic's 'Value error, ' and the name pattern as a regex."""
    root = tmp_path / "registry"
    settings = make_settings(registry_config_path=root / "config.yaml", seed_examples_from=EXAMPLES)
    bad = {
        "name": "bad name",
        "api": {"method": "GET", "base_url": "https://api.example.com", "path": "/a"},
        "parameters": {"q": {"type": "strin", "in": "query"}},
        "auth": {"type": "bearer", "secret": "abc123"},
    }
    async with app_client(create_app(settings)) as client:
        answer = await client.post("/tools", json=bad)
    assert answer.status_code == 422
    violations = answer.json()["violations"]
    assert [v["path"] for v in violations] == ["description", "parameters.q", "auth.secret", "name"]
    assert violations[0]["rule"] == "missing"
    assert violations[2]["message"].startswith("must be a tool secret reference like 'secret:NAME'")
    assert violations[3]["message"] == "a tool name is 1-64 letters, digits, '-' or '_'"
    assert not any("Value error" in v["message"] for v in violations)
