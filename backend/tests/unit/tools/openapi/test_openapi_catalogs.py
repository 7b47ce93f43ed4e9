"""The catalog service on a real registry directory, and the import-openapi CLI."""

import json
import shutil
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from dynamic_tools.cli.main import app
from dynamic_tools.errors import ConflictError, NotFoundError, OpenAPIInvalidError
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.tools.catalogs import CatalogService
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES
from tests.unit.tools.openapi.conftest import OPENAPI


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(EXAMPLES / "tools", root / "tools")
    for name in ("petstore-3.0.json", "petstore-2.0.json", "recursive-refs-3.0.yaml"):
        shutil.copy(OPENAPI / name, root / name)
    return root


@pytest.fixture
def service(root: Path) -> CatalogService:
    registry = ToolRegistry(root / "tools", variables={"PUBLIC_BASE_URL": "http://127.0.0.1:1"})
    registry.reload()
    fetcher = DocumentFetcher(client=httpx.AsyncClient(), guard=TargetGuard(), local_roots=[root])
    return CatalogService(catalogs_dir=root / "catalogs", registry=registry, fetcher=fetcher)


async def test_import_writes_config_and_manifest_then_the_registry_serves_them(
    service: CatalogService, root: Path
) -> None:
    before = set(service.registry.names())
    done = await service.import_openapi("petstore-3.0.json", "pets", prefix="pets")
    assert done.command_count == 18 and done.provider_contract_count == 2
    config = yaml.safe_load((root / "catalogs" / "pets.yaml").read_text())
    assert config["kind"] == "openapi_3" and config["prefix"] == "pets" and config["enabled"]
    assert config["source"] == str(root / "petstore-3.0.json")
    assert config["document_hash"].startswith("sha256:") and config["created_at"]
    manifest = json.loads((root / "catalogs" / "pets.tools.json").read_text())
    assert len(manifest) == 18 and manifest[0]["name"].startswith("pets_")
    added = set(service.registry.names()) - before
    assert len(added) == 18 and "pets_getPetById" in added
    assert service.registry.problems == []
    assert "secret:PETS_TOKEN" in (root / "catalogs" / "pets.tools.json").read_text()
    listed = service.list()
    assert [c.name for c in listed] == ["pets"] and listed[0].registered_tools == 18


async def test_conflicts_exist_and_clash_and_nothing_is_written(
    service: CatalogService, root: Path
) -> None:
    await service.import_openapi("petstore-3.0.json", "pets")
    with pytest.raises(ConflictError, match="already exists"):
        await service.import_openapi("petstore-3.0.json", "pets")
    with pytest.raises(ConflictError) as caught:
        await service.import_openapi("petstore-2.0.json", "pets2")
    assert "catalog 'pets'" in caught.value.message and "addPet" in caught.value.message
    assert not (root / "catalogs" / "pets2.yaml").exists()
    (root / "tools" / "getNode.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "getNode",
                "description": "hand-written",
                "api": {"method": "GET", "base_url": "https://x.io", "path": "/n"},
            }
        )
    )
    service.registry.reload()
    with pytest.raises(ConflictError) as caught:
        await service.import_openapi("recursive-refs-3.0.yaml", "trees")
    assert "'getNode'" in caught.value.message and "tools/getNode.yaml" in caught.value.message
    overwritten = await service.import_openapi(
        "petstore-3.0.json", "pets", overwrite=True, include=["getPetById"]
    )
    assert overwritten.command_count == 1
    assert len([n for n in service.registry.names() if service.registry.origin(n) and
                service.registry.origin(n).parent.name == "catalogs"]) == 1  # fmt: skip


async def test_disable_enable_and_remove(service: CatalogService, root: Path) -> None:
    await service.import_openapi("petstore-3.0.json", "pets", enabled=False)
    assert "addPet" not in service.registry
    toggled = await service.set_enabled("pets", True)
    assert "addPet" in service.registry and toggled.command_count_after_toggle == len(
        service.registry.names()
    )
    await service.set_enabled("pets", False)
    assert "addPet" not in service.registry
    assert (root / "catalogs" / "pets.tools.json").exists()
    fresh = ToolRegistry(root / "tools", variables={"PUBLIC_BASE_URL": "http://h"})
    fresh.reload()
    assert "addPet" not in fresh  # a restarted server keeps it disabled
    removed = await service.remove("pets", remove_manifest=False)
    assert removed.model_dump() == {
        "removed_catalog_id": "pets",
        "manifest_removed": False,
        "remaining_catalog_count": 0,
    }
    assert (root / "catalogs" / "pets.tools.json").exists()
    with pytest.raises(NotFoundError):
        await service.remove("pets")
    with pytest.raises(NotFoundError):
        await service.set_enabled("pets", True)


async def test_an_unusable_document_is_refused_with_violations(
    service: CatalogService, root: Path
) -> None:
    (root / "not-openapi.yaml").write_text("swagger: '1.2'\napis: []\n")
    with pytest.raises(OpenAPIInvalidError) as caught:
        await service.import_openapi("not-openapi.yaml", "old")
    assert caught.value.violations[0]["rule"] == "unknown_kind"
    (root / "broken.json").write_text('{"openapi": ')
    report = await service.validate_openapi("broken.json")
    assert report.valid is False and report.violations[0].rule == "syntax"
    assert not (root / "catalogs").exists()


async def test_validate_and_preview_write_nothing(service: CatalogService, root: Path) -> None:
    report = await service.validate_openapi("petstore-2.0.json")
    assert report.valid and report.document_kind == "openapi_2"
    assert report.operation_count == 20 and report.tool_count == 18
    preview = await service.preview_import("petstore-2.0.json", "pets", max_preview_tokens=120)
    assert preview.projected_command_count == 18
    assert preview.projected_group_prefixes[0].model_dump() == {"group": "pet", "count": 8}
    assert preview.command_preview_truncated is True
    assert preview.command_preview is not None and 0 < len(preview.command_preview) < 18
    assert not (root / "catalogs").exists()


def test_cli_import_openapi(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGISTRY_CONFIG_PATH", str(root / "config.yaml"))
    monkeypatch.chdir(root)
    runner = CliRunner()
    result = runner.invoke(
        app, ["import-openapi", str(OPENAPI / "petstore-3.1.json"), "--catalog", "p31"]
    )
    assert result.exit_code == 0, result.output
    assert "imported catalog p31: 18 tools" in result.output
    again = runner.invoke(
        app, ["import-openapi", "petstore-3.0.json", "--catalog", "p30", "--prefix", "v30"]
    )
    assert again.exit_code == 0, again.output
    clash = runner.invoke(app, ["import-openapi", "petstore-3.0.json", "--catalog", "p31"])
    assert clash.exit_code == 1 and "already exists" in clash.output
    bad = runner.invoke(app, ["import-openapi", "nope.json", "--catalog", "x", "--json"])
    assert bad.exit_code == 1 and '"error_code": "invalid_source"' in bad.output
