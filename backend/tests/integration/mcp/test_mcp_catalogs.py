"""OpenAPI catalogs over MCP: validate → preview → import, disable, re-enable, remove, with the
tool list following each step (the real Petstore document)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from mcp import Client
from starlette.applications import Starlette
from starlette.routing import Route

from tests.conftest import FIXTURES
from tests.support.mcp_client import call, confirmed_call, mcp_client
from tests.support.servers import serve
from tests.support.shop_api import Shop


async def names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def test_import_disable_enable_remove_with_the_tool_list_following(
    server: str, travel_root: Path, tmp_path: Path
) -> None:
    (travel_root / "imports").mkdir()
    shutil.copy(FIXTURES / "openapi" / "petstore-3.0.json", travel_root / "imports" / "pets.json")
    source = "imports/pets.json"
    outside = tmp_path / "elsewhere.json"
    shutil.copy(FIXTURES / "openapi" / "petstore-3.0.json", outside)
    async with mcp_client(server) as client:
        before = await names(client)
        checked = await call(client, "catalog.validate_openapi", source=source)
        assert checked["valid"] is True and checked["document_kind"] == "openapi_3"
        assert checked["operation_count"] >= 3
        preview = await call(client, "catalog.preview_import", source=source, catalog="pets")
        assert preview["projected_command_count"] >= 3
        assert await names(client) == before  # a preview writes nothing

        imported = await call(client, "catalog.import_openapi", source=source, catalog="pets")
        assert not imported["is_error"], imported
        added = await names(client) - before
        assert added and len(added) == imported["command_count"]

        again = await call(client, "catalog.import_openapi", source=source, catalog="pets")
        assert again["is_error"] and again["category"] == "conflict"

        off = await call(client, "catalog.set_enabled", catalog="pets", enabled=False)
        assert off["enabled"] is False and not (await names(client)) & added
        on = await call(client, "catalog.set_enabled", catalog="pets", enabled=True)
        assert on["enabled"] is True and added <= await names(client)

        removed = await confirmed_call(
            client, "catalog.remove", catalog="pets", remove_manifest=True
        )
        assert removed["removed_catalog_id"] == "pets" and removed["manifest_removed"] is True
        assert await names(client) == before

        refused = await call(client, "catalog.validate_openapi", source=str(outside))
    assert refused["is_error"] and refused["category"] == "validation"
    assert str(outside) in refused["message"] or "outside" in refused["message"]


async def test_an_arazzo_document_is_validated_over_mcp(server: str, travel_root: Path) -> None:
    oai = FIXTURES / "arazzo" / "oai"
    for name in ("pet-coupons.arazzo.yaml", "pet-coupons.openapi.yaml"):
        shutil.copy(oai / name, travel_root / name)
    async with mcp_client(server) as client:
        checked = await call(client, "catalog.validate_openapi", source="pet-coupons.arazzo.yaml")
    assert not checked["is_error"], checked
    assert checked["document_kind"] == "arazzo" and checked["valid"] is True
    assert "apply-coupon" in checked["workflows"] and checked["violations"] == []


async def test_an_arazzo_document_imports_over_mcp_and_its_workflow_runs_as_a_w_tool(
    start_server: Callable[..., str], travel_root: Path
) -> None:
    shop = Shop()
    app = Starlette(routes=[Route("/{path:path}", shop.handle, methods=["GET", "POST"])])
    with serve(app) as shop_url:
        shutil.copytree(FIXTURES / "arazzo" / "semantics", travel_root / "semantics")
        server = start_server(allowed_target_hosts=[shop_url.split("://")[1]])
        source = "semantics/shop.arazzo.yaml"
        async with mcp_client(server) as client:
            preview = await call(
                client,
                "catalog.preview_import",
                source=source,
                catalog="shop",
                base_url=f"{shop_url}/api",
            )
            assert preview["valid"] and preview["workflows"] == ["login", "buy"], preview
            only = await call(
                client,
                "catalog.preview_import",
                source=source,
                catalog="shop",
                base_url=f"{shop_url}/api",
                workflows=["login"],
            )
            assert only["workflows"] == ["login"], only
            left = {w["workflow_id"]: w["imported"] for w in only["arazzo_workflows"]}
            assert left == {"login": True, "buy": False}
            wrong = await call(
                client, "catalog.import_openapi", source=source, catalog="shop", lenient="yes"
            )
            assert wrong["is_error"] and wrong["category"] == "validation"
            assert "lenient" in str(wrong)
            imported = await call(
                client,
                "catalog.import_openapi",
                source=source,
                catalog="shop",
                base_url=f"{shop_url}/api",
            )
            assert not imported["is_error"], imported
            assert imported["workflows"] == ["login", "buy"]
            assert {"w_login", "w_buy"} <= await names(client)
            run = await call(client, "w_buy", user="ada", password="pw", itemId="I1", quantity=2)
    assert not run["is_error"], run
    assert "O-1" in json.dumps(run)
    assert [r["path"] for r in shop.requests][:2] == ["/sessions", "/items/I1"]


async def test_a_document_given_inline_is_validated_and_imported_over_mcp(
    server: str, travel_root: Path
) -> None:
    oai = FIXTURES / "arazzo" / "oai"
    inline = {
        "content": (oai / "pet-coupons.arazzo.yaml").read_text(),
        "filename": "pet-coupons.arazzo.yaml",
        "files": {"./pet-coupons.openapi.yaml": (oai / "pet-coupons.openapi.yaml").read_text()},
    }
    async with mcp_client(server) as client:
        checked = await call(client, "catalog.validate_openapi", **inline)
        assert not checked["is_error"] and checked["valid"] is True, checked
        neither = await call(client, "catalog.validate_openapi")
        assert neither["is_error"] and neither["category"] == "validation"
        both = await call(client, "catalog.validate_openapi", source="x.yaml", **inline)
        assert both["is_error"] and "not both" in both["message"]
        outside = await call(
            client, "catalog.validate_openapi", content="{}", files={"../x.yaml": "{}"}
        )
        assert outside["is_error"] and "files.../x.yaml" in outside["message"]
        imported = await call(
            client,
            "catalog.import_openapi",
            **inline,
            catalog="coupons",
            prefix="cdesk",
            lenient=True,
            base_url="https://pets.example.com/v1",
        )
        assert not imported["is_error"], imported
        assert {"cdesk_findPetsByTags", "w_apply_coupon"} <= await names(client)
    assert (travel_root / "catalogs" / "coupons.upload" / "pet-coupons.openapi.yaml").is_file()
