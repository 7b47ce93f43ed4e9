"""/catalogs with the document inline: ``content`` and its ``files`` instead of
a ``source``; the Arazzo ``prefix`` naming the tools; conflicts that say what each name clashes
with and how to proceed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES
from tests.support.app_client import app_client

OAI = FIXTURES / "arazzo" / "oai"
ARAZZO = (OAI / "pet-coupons.arazzo.yaml").read_text()
OPENAPI = (OAI / "pet-coupons.openapi.yaml").read_text()
PETSTORE = (FIXTURES / "openapi" / "petstore-3.0.json").read_text()


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


async def test_an_arazzo_prefix_names_its_tools_and_the_workflows_call_them(
    settings: Settings, registry_root: Path
) -> None:
    for name in ("pet-coupons.arazzo.yaml", "pet-coupons.openapi.yaml"):
        shutil.copy(OAI / name, registry_root / name)
    body = {
        "source": "pet-coupons.arazzo.yaml",
        "name": "couponsdesk",
        "prefix": "cdesk_",
        "base_url": "https://pets.example.com/v1",
        "lenient": True,  # apply-coupon names its parameters loosely
    }
    async with app_client(create_app(settings)) as client:
        answer = await client.post("/catalogs/preview", json={**body, "max_preview_tokens": 9999})
        preview = answer.json()
        assert preview["catalog"]["prefix"] == "cdesk_"
        names = [c["name"] for c in preview["command_preview"]]
        assert sorted(names) == [
            "cdesk_findPetsByStatus",
            "cdesk_findPetsByTags",
            "cdesk_getPetCoupons",
            "cdesk_placeOrder",
        ]
        imported = await client.post("/catalogs", json=body)
        assert imported.status_code == 201, imported.text
        tools = [t["name"] for t in (await client.get("/tools")).json()["tools"]]
        assert "cdesk_findPetsByTags" in tools and not any(
            t.startswith("couponsdesk") for t in tools
        )
        listed = (await client.get("/catalogs")).json()["catalogs"]
        assert [(c["name"], c["prefix"]) for c in listed] == [("couponsdesk", "cdesk_")]
        document = (registry_root / "workflows" / "couponsdesk.arazzo.yaml").read_text()
        assert "call: cdesk_findPetsByTags" in document and "couponsdesk_" not in document
        workflow = await client.get("/workflows/apply_coupon")
        assert workflow.status_code == 200, workflow.text
        assert (await client.get("/workflows")).json()["problems"] == []


UPLOAD = {
    "content": ARAZZO,
    "filename": "pet-coupons.arazzo.yaml",
    "files": {"./pet-coupons.openapi.yaml": OPENAPI},
    "base_url": "https://pets.example.com/v1",
    "lenient": True,
}


async def test_an_uploaded_arazzo_document_is_read_with_its_files_and_kept_with_the_catalog(
    settings: Settings, registry_root: Path
) -> None:
    async with app_client(create_app(settings)) as client:
        valid = await client.post(
            "/catalogs/validate", json={k: UPLOAD[k] for k in ("content", "filename", "files")}
        )
        assert valid.status_code == 200, valid.text
        assert valid.json()["valid"] is True and valid.json()["warnings"] == []
        alone = await client.post("/catalogs/validate", json={"content": ARAZZO})
        unread = [w for w in alone.json()["warnings"] if w["rule"] == "source_not_read"]
        assert any(
            "'pet-coupons.openapi.yaml' is not among the uploaded files" in w["message"]
            for w in unread
        ), unread

        preview = await client.post("/catalogs/preview", json={**UPLOAD, "name": "coupons"})
        assert preview.status_code == 200 and preview.json()["valid"] is True, preview.text
        assert preview.json()["workflows"] == ["apply_coupon", "buy_available_pet", "place_order"]
        assert not (registry_root / "catalogs").exists()  # a preview writes nothing

        imported = await client.post("/catalogs", json={**UPLOAD, "name": "coupons"})
        assert imported.status_code == 201, imported.text
        assert imported.json()["command_count"] == 4
    kept = registry_root / "catalogs" / "coupons.upload"
    assert (kept / "pet-coupons.openapi.yaml").read_text() == OPENAPI
    assert (kept / "pet-coupons.arazzo.yaml").read_text() == ARAZZO

    async with app_client(create_app(settings)) as client:  # a restart finds it all
        listed = (await client.get("/catalogs")).json()["catalogs"]
        assert [(c["name"], c["registered_tools"]) for c in listed] == [("coupons", 4)]
        assert listed[0]["source"] == str(kept / "pet-coupons.arazzo.yaml")
        # The stored files are an ordinary path import's source now.
        again = await client.post(
            "/catalogs/validate", json={"source": "catalogs/coupons.upload/pet-coupons.arazzo.yaml"}
        )
        assert again.json()["valid"] is True
        assert (await client.get("/workflows/place_order")).status_code == 200
        assert (await client.delete("/catalogs/coupons")).status_code == 200
    assert not kept.exists()
    assert sorted(p.name for p in (registry_root / "catalogs").iterdir()) == []


async def test_a_pasted_openapi_document_imports_and_an_overwrite_replaces_its_files(
    settings: Settings, registry_root: Path
) -> None:
    async with app_client(create_app(settings)) as client:
        first = await client.post(
            "/catalogs", json={"content": PETSTORE, "name": "pets", "prefix": "p"}
        )
        assert first.status_code == 201, first.text
        assert first.json()["command_count"] == 18
        assert (await client.get("/tools/p_getPetById")).status_code == 200
        kept = registry_root / "catalogs" / "pets.upload"
        assert [p.name for p in kept.iterdir()] == ["document"]

        body = {"content": PETSTORE, "filename": "petstore.json", "name": "pets", "prefix": "p"}
        refused = await client.post("/catalogs", json=body)
        assert refused.status_code == 409
        replaced = await client.post("/catalogs", json={**body, "overwrite": True})
        assert replaced.status_code == 201, replaced.text
        assert [p.name for p in kept.iterdir()] == ["petstore.json"]
        catalog = (await client.get("/catalogs/pets")).json()
        assert catalog["source"] == str(kept / "petstore.json") and catalog["prefix"] == "p"
        (registry_root / "petstore.json").write_text(PETSTORE)
        by_path = {"source": "petstore.json", "name": "pets", "prefix": "p", "overwrite": True}
        assert (await client.post("/catalogs", json=by_path)).status_code == 201
        assert not kept.exists()  # no earlier upload left behind


async def test_the_document_is_a_source_or_content_and_file_names_stay_inside(
    settings: Settings, registry_root: Path
) -> None:
    shutil.copy(OAI / "pet-coupons.openapi.yaml", registry_root / "pets.yaml")
    cases = [
        ({}, "source", "one_of"),
        ({"source": "pets.yaml", "content": OPENAPI}, "content", "one_of"),
        ({"source": "pets.yaml", "files": {"a.yaml": "x"}}, "files", "with_content"),
        ({"content": OPENAPI, "files": {"/etc/passwd": "x"}}, "files./etc/passwd", "relative_path"),
        ({"content": OPENAPI, "files": {"../up.yaml": "x"}}, "files.../up.yaml", "relative_path"),
        ({"content": OPENAPI, "files": {"a/../../b": "x"}}, "files.a/../../b", "relative_path"),
        ({"content": OPENAPI, "files": {"./document": "x"}}, "files../document", "unique"),
        ({"content": OPENAPI, "filename": "/abs.yaml"}, "filename", "relative_path"),
    ]
    async with app_client(create_app(settings)) as client:
        for path in ("/catalogs/validate", "/catalogs/preview", "/catalogs"):
            for payload, field, rule in cases:
                answer = await client.post(
                    path, json={**payload, "name": "n"} if path != "/catalogs/validate" else payload
                )
                assert answer.status_code == 422, (path, payload, answer.text)
                violation = answer.json()["violations"][0]
                assert (violation["path"], violation["rule"]) == (field, rule), answer.json()
        # Request validation: control characters in a name, too many files, NUL in a text.
        schema_cases = [
            ({"content": OPENAPI, "files": {"a\x00b": "x"}}, "body.files"),
            ({"content": OPENAPI, "files": {"a\\b": "x"}}, "body.files"),
            ({"content": OPENAPI, "files": {f"f{i}": "x" for i in range(65)}}, "body.files"),
            ({"content": "a\x00"}, "body.content"),
            ({"content": ""}, "body.content"),
        ]
        for payload, field in schema_cases:
            answer = await client.post("/catalogs/validate", json=payload)
            assert answer.status_code == 422, (payload, answer.text)
            assert any(v["path"].startswith(field) for v in answer.json()["violations"]), (
                answer.json()
            )
        # The text itself is wrong: its problems point at content, not at a source.
        broken = {"content": "openapi: [3.0", "name": "n"}
        checked = (
            await client.post("/catalogs/validate", json={"content": "openapi: [3.0"})
        ).json()
        assert checked["valid"] is False
        assert [v["path"] for v in checked["violations"]] == ["content"]
        refused = await client.post("/catalogs", json=broken)
        assert refused.status_code == 422
        assert [v["path"] for v in refused.json()["violations"]] == ["content"]
    assert not (registry_root / "catalogs").exists()


async def test_preview_conflicts_name_what_each_clashes_with_and_how_to_proceed(
    settings: Settings, registry_root: Path
) -> None:
    async with app_client(create_app(settings)) as client:
        assert (
            await client.post("/catalogs", json={"content": PETSTORE, "name": "pets"})
        ).status_code == 201
        same = (
            await client.post("/catalogs/preview", json={"content": PETSTORE, "name": "pets"})
        ).json()
        assert same["conflicts"] == [
            {
                "catalog": "pets",
                "name": "pets",
                "kind": "catalog",
                "existing": "catalog 'pets'",
                "existing_kind": "catalog",
                "existing_name": "pets",
                "overwrite_resolves": True,
                "how": "choose overwrite to replace catalog 'pets', or another catalog name",
            }
        ]
        other = (
            await client.post("/catalogs/preview", json={"content": PETSTORE, "name": "pets2"})
        ).json()
        assert len(other["conflicts"]) == 18
        pet = next(c for c in other["conflicts"] if c["name"] == "getPetById")
        assert pet == {
            "tool": "getPetById",
            "name": "getPetById",
            "kind": "tool",
            "existing": "catalog 'pets'",
            "existing_kind": "catalog",
            "existing_name": "pets",
            "overwrite_resolves": False,
            "how": "give a tool prefix, or disable or remove catalog 'pets'",
        }
        clash = await client.post(
            "/catalogs", json={"content": PETSTORE, "name": "pets2", "overwrite": True}
        )
        assert clash.status_code == 409  # overwrite replaces a catalog, not another's tools
        assert clash.json()["context"]["conflicts"][0]["how"] == pet["how"]
        prefixed = await client.post(
            "/catalogs/preview", json={"content": PETSTORE, "name": "pets2", "prefix": "two"}
        )
        assert prefixed.json()["conflicts"] == []
