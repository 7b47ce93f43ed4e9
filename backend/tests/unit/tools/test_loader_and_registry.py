import json
import shutil
from pathlib import Path

import pytest
import yaml

from dynamic_tools.errors import ConflictError, NotFoundError, ToolConfigError
from dynamic_tools.tools.loader import load_directory
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import FIXTURES

VARS = {"PUBLIC_BASE_URL": "http://127.0.0.1:8123"}


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    target = tmp_path / "tools"
    shutil.copytree(FIXTURES / "tools" / "mixed", target)
    return target


def test_one_bad_file_does_not_stop_the_others(tools_dir: Path) -> None:
    result = load_directory(tools_dir)
    names = sorted(t.config.name for t in result.tools)
    assert names == ["delete_item", "get_item", "get_weather", "local_ping", "unknown_var"]
    by_file = {(p.file, p.field) for p in result.problems}
    assert ("02_list.json", "[1].api") in by_file
    assert ("03_bad_syntax.yaml", "(syntax)") in by_file
    assert ("04_bad_fields.yaml", "name") in by_file
    assert ("04_bad_fields.yaml", "api.method") in by_file
    assert ("04_bad_fields.yaml", "api.base_url") in by_file
    assert ("04_bad_fields.yaml", "auth.secret") in by_file
    assert ("05_duplicate.yaml", "name") in by_file
    syntax = next(p for p in result.problems if p.file == "03_bad_syntax.yaml")
    assert syntax.reason.startswith("line ")
    duplicate = next(p for p in result.problems if p.file == "05_duplicate.yaml")
    assert "01_weather.yaml" in duplicate.reason
    literal = next(p for p in result.problems if p.field == "auth.secret")
    assert "sk-live-literal-secret" not in literal.reason


def test_registry_resolves_variables_and_reports_unknown_ones(tools_dir: Path) -> None:
    registry = ToolRegistry(tools_dir, variables=VARS)
    problems = registry.reload()
    assert registry.get("local_ping").api.base_url == "http://127.0.0.1:8123/demo"
    assert registry.get_source("local_ping").api.base_url == "${PUBLIC_BASE_URL}/demo"
    assert "unknown_var" not in registry
    assert any(
        p.tool == "unknown_var" and p.field == "api.base_url" and "${NOPE}" in p.reason
        for p in problems
    )


def test_get_multiple_returns_found_and_missing_in_order(tools_dir: Path) -> None:
    registry = ToolRegistry(tools_dir, variables=VARS)
    registry.reload()
    found, missing = registry.get_multiple(["get_item", "nope", "get_weather", "get_item", "x"])
    assert [t.name for t in found] == ["get_item", "get_weather"]
    assert missing == ["nope", "x"]
    with pytest.raises(NotFoundError):
        registry.get("nope")


def test_create_update_delete_write_files(tools_dir: Path) -> None:
    registry = ToolRegistry(tools_dir, variables=VARS)
    registry.reload()
    new = {
        "name": "list_users",
        "description": "List users",
        "api": {"method": "GET", "base_url": "${PUBLIC_BASE_URL}/api", "path": "/users"},
        "parameters": {"limit": {"type": "integer", "in": "query", "minimum": 1}},
    }
    created = registry.create(new)
    assert created.api.base_url == "http://127.0.0.1:8123/api"
    on_disk = yaml.safe_load((tools_dir / "list_users.yaml").read_text())
    assert on_disk["api"]["base_url"] == "${PUBLIC_BASE_URL}/api"
    assert on_disk["parameters"]["limit"] == {"type": "integer", "minimum": 1}
    with pytest.raises(ConflictError):
        registry.create(new)

    # Updating a tool that lives in a list file keeps the file's other entries.
    updated = registry.update(
        "get_item",
        {
            "name": "get_item",
            "description": "Get one item (v2)",
            "api": {"method": "GET", "base_url": "https://items.example/v2", "path": "/items/{id}"},
            "parameters": {"id": {"type": "string", "in": "path", "required": True}},
        },
    )
    assert updated.description == "Get one item (v2)"
    listed = json.loads((tools_dir / "02_list.json").read_text())
    assert [i["name"] for i in listed] == ["get_item", "broken_item", "delete_item"]

    registry.delete("delete_item")
    listed = json.loads((tools_dir / "02_list.json").read_text())
    assert [i["name"] for i in listed] == ["get_item", "broken_item"]
    registry.delete("list_users")
    assert not (tools_dir / "list_users.yaml").exists()
    assert not list(tools_dir.glob(".*.tmp"))


def test_invalid_writes_change_nothing(tools_dir: Path) -> None:
    registry = ToolRegistry(tools_dir, variables=VARS)
    registry.reload()
    before = sorted(p.name for p in tools_dir.iterdir())
    with pytest.raises(ToolConfigError) as info:
        registry.create({"name": "x y", "description": "", "api": {"method": "GET"}})
    paths = {v["path"] for v in info.value.violations}
    assert {"name", "description", "api.base_url"} <= paths
    with pytest.raises(ToolConfigError):
        registry.update(
            "get_item",
            {
                "name": "other",
                "description": "d",
                "api": {"method": "GET", "base_url": "https://a.example"},
            },
        )
    with pytest.raises(ToolConfigError):
        registry.create(
            {"name": "v", "description": "d", "api": {"method": "GET", "base_url": "${NOPE}/x"}}
        )
    assert sorted(p.name for p in tools_dir.iterdir()) == before
