"""/catalogs over the API: validate, preview, import (path and real HTTP URL), conflicts,
enable/disable, remove, and 422s that name the field."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse, RedirectResponse

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES
from tests.support.app_client import app_client
from tests.support.servers import free_port, serve

PETSTORE = FIXTURES / "openapi" / "petstore-3.0.json"


@pytest.fixture(scope="module")
def spec_server() -> Iterator[tuple[str, int]]:
    """A real HTTP server publishing an OpenAPI document with a relative server URL."""
    document = json.loads(PETSTORE.read_text())
    document["servers"] = [{"url": "/api/v3"}]
    site = FastAPI(openapi_url=None)  # its own /openapi.json would shadow ours

    @site.get("/openapi.json")
    async def spec() -> JSONResponse:
        return JSONResponse(document)

    @site.get("/moved.json")
    async def moved() -> RedirectResponse:
        return RedirectResponse("/openapi.json")

    port = free_port()
    with serve(site, port) as url:
        yield url, port


@pytest.fixture
def settings(make_settings: Callable[..., Settings], registry_root: Path) -> Settings:
    shutil.copy(PETSTORE, registry_root / "petstore.json")
    return make_settings()


async def test_the_catalog_lifecycle_over_rest(settings: Settings, registry_root: Path) -> None:
    async with app_client(create_app(settings)) as client:
        travel = len((await client.get("/tools")).json()["tools"])
        valid = await client.post("/catalogs/validate", json={"source": "petstore.json"})
        assert valid.status_code == 200 and valid.json()["valid"] is True
        assert valid.json()["document_kind"] == "openapi_3"

        preview = await client.post(
            "/catalogs/preview",
            json={"source": "petstore.json", "name": "pets", "max_preview_tokens": 100},
        )
        assert preview.status_code == 200
        body = preview.json()
        assert body["projected_command_count"] == 18 and body["provider_contract_count"] == 2
        assert body["provider_contracts"][0]["provider"] == "findPetsByStatus"
        assert body["command_preview_truncated"] is True and body["conflicts"] == []
        assert not (registry_root / "catalogs").exists()

        imported = await client.post("/catalogs", json={"source": "petstore.json", "name": "pets"})
        assert imported.status_code == 201, imported.text
        assert imported.json()["command_count"] == 18
        # What its tools need, said at once: not set yet, and where to set it.
        assert imported.json()["secrets"] == [
            {
                "secret": "secret:PETS_TOKEN",
                "set": False,
                "set_with": "the environment variable DT_SECRET_PETS_TOKEN or the file "
                "PETS_TOKEN in SECRETS_DIR",
            }
        ]
        tools = (await client.get("/tools")).json()
        assert len(tools["tools"]) == travel + 18 and tools["problems"] == []
        pet = (await client.get("/tools/getPetById")).json()
        assert pet["endpoint"] == "GET http://petstore.swagger.io/v2/pet/{petId}"
        assert pet["auth"]["secret"] == "secret:PETS_TOKEN"

        again = await client.post("/catalogs", json={"source": "petstore.json", "name": "pets"})
        assert again.status_code == 409 and again.json()["error_code"] == "conflict"
        clash = await client.post("/catalogs", json={"source": "petstore.json", "name": "pets2"})
        assert clash.status_code == 409
        assert "already defined by catalog 'pets'" in clash.json()["message"]

        listed = (await client.get("/catalogs")).json()["catalogs"]
        assert [(c["name"], c["registered_tools"]) for c in listed] == [("pets", 18)]
        assert [s["secret"] for s in listed[0]["secrets"]] == ["secret:PETS_TOKEN"]

        off = await client.patch("/catalogs/pets/enabled", json={"enabled": False})
        assert off.status_code == 200 and off.json()["command_count_after_toggle"] == travel
        assert (await client.get("/tools/getPetById")).status_code == 404
        on = await client.post("/catalogs/pets/enabled", json={"enabled": True})
        assert on.json()["command_count_after_toggle"] == travel + 18

        removed = await client.delete("/catalogs/pets")
        assert removed.status_code == 200 and removed.json()["manifest_removed"] is True
        assert (await client.get("/catalogs/pets")).status_code == 404
        assert len((await client.get("/tools")).json()["tools"]) == travel
        assert sorted(p.name for p in (registry_root / "catalogs").iterdir()) == []


async def test_a_clash_with_a_hand_written_tool_names_both(
    settings: Settings, registry_root: Path
) -> None:
    document = json.loads(PETSTORE.read_text())
    document["paths"]["/pet/{petId}"]["get"]["operationId"] = "search_flights"
    (registry_root / "clash.json").write_text(json.dumps(document))
    async with app_client(create_app(settings)) as client:
        answer = await client.post("/catalogs", json={"source": "clash.json", "name": "clash"})
        assert answer.status_code == 409
        body = answer.json()
        assert (
            "'search_flights'" in body["message"]
            and "tools/search_flights.yaml" in (body["message"])
        )
        assert body["context"]["conflicts"] == [
            {
                "tool": "search_flights",
                "name": "search_flights",
                "kind": "tool",
                "existing": "tools/search_flights.yaml",
                "existing_kind": "tool_file",
                "existing_name": "tools/search_flights.yaml",
                "overwrite_resolves": False,
                "how": "give a tool prefix, or rename or remove the tool in "
                "tools/search_flights.yaml",
            }
        ]
        preview = await client.post("/catalogs/preview", json={"source": "clash.json", "name": "c"})
        assert preview.json()["conflicts"][0]["tool"] == "search_flights"


async def test_import_from_a_real_url_on_the_allow_list(
    make_settings: Callable[..., Settings], spec_server: tuple[str, int]
) -> None:
    url, port = spec_server
    settings = make_settings(allowed_target_hosts=[f"127.0.0.1:{port}"])
    async with app_client(create_app(settings)) as client:
        answer = await client.post(
            "/catalogs", json={"source": f"{url}/openapi.json", "name": "remote", "prefix": "r"}
        )
        assert answer.status_code == 201, answer.text
        tool = (await client.get("/tools/r_getPetById")).json()
        assert tool["endpoint"] == f"GET {url}/api/v3/pet/{{petId}}"  # relative server resolved
        moved = await client.post("/catalogs/validate", json={"source": f"{url}/moved.json"})
        assert moved.status_code == 422
        assert moved.json()["violations"][0]["rule"] == "redirect"


async def test_refusals_and_bad_input_are_422_naming_the_field(
    make_settings: Callable[..., Settings], spec_server: tuple[str, int], tmp_path: Path
) -> None:
    url, _ = spec_server
    (tmp_path / "outside.json").write_text(PETSTORE.read_text())
    async with app_client(create_app(make_settings())) as client:
        not_listed = await client.post("/catalogs/validate", json={"source": f"{url}/openapi.json"})
        assert not_listed.status_code == 422
        assert not_listed.json()["error_code"] == "invalid_source"
        outside = await client.post(
            "/catalogs/validate", json={"source": str(tmp_path / "outside.json")}
        )
        assert outside.status_code == 422
        assert str(tmp_path / "outside.json") in outside.json()["message"]
        assert outside.json()["violations"][0] == {
            "path": "source",
            "rule": "outside_root",
            "message": outside.json()["message"],
        }
        cases = [
            ("/catalogs/validate", {}, "source"),  # a source or content: neither given
            ("/catalogs/preview", {"source": "x.json"}, "body.name"),
            # (the name and prefix patterns are checked with the source: see below)
            ("/catalogs", {"source": "x.json", "name": "bad name!"}, "name"),
            ("/catalogs", {"source": "x.json", "name": "ok", "prefix": "-x"}, "prefix"),
            ("/catalogs", {"source": "x.json", "name": "ok", "surprise": 1}, "body.surprise"),
        ]
        for path, payload, field in cases:
            answer = await client.post(path, json=payload)
            assert answer.status_code == 422, (path, payload)
            assert field in [v["path"] for v in answer.json()["violations"]]
        missing = await client.patch("/catalogs/nope/enabled", json={"enabled": True})
        assert missing.status_code == 404
        assert (await client.delete("/catalogs/nope")).status_code == 404


async def test_an_invalid_document_is_422_with_violations_and_writes_nothing(
    settings: Settings, registry_root: Path
) -> None:
    (registry_root / "bad.yaml").write_text("openapi: 3.0.0\ninfo: {}\npaths: {}\n")
    async with app_client(create_app(settings)) as client:
        answer = await client.post("/catalogs", json={"source": "bad.yaml", "name": "bad"})
        assert answer.status_code == 422
        assert answer.json()["error_code"] == "openapi_invalid"
        assert answer.json()["violations"][0]["rule"] == "no_operations"
        include = await client.post(
            "/catalogs", json={"source": "petstore.json", "name": "p", "include": ["nope"]}
        )
        assert include.status_code == 422
        assert include.json()["violations"][0]["path"] == "include[0]"
    assert not (registry_root / "catalogs").exists()


async def test_an_arazzo_document_is_checked_with_its_sources_and_nothing_is_written(
    settings: Settings, registry_root: Path
) -> None:
    oai = FIXTURES / "arazzo" / "oai"
    for name in ("pet-coupons.arazzo.yaml", "pet-coupons.openapi.yaml", "FAPI-PAR.arazzo.yaml"):
        shutil.copy(oai / name, registry_root / name)  # FAPI-PAR's OpenAPI source is not here
    async with app_client(create_app(settings)) as client:
        good = await client.post("/catalogs/validate", json={"source": "pet-coupons.arazzo.yaml"})
        assert good.status_code == 200, good.text
        body = good.json()
        assert body["document_kind"] == "arazzo" and body["valid"] is True, body
        assert body["workflows"] == ["apply-coupon", "buy-available-pet", "place-order"]
        assert body["sources"] == [
            {"name": "pet-coupons", "url": "./pet-coupons.openapi.yaml", "type": "openapi"}
        ]
        assert body["warnings"] == []  # its operations were found in its source

        missing = await client.post("/catalogs/validate", json={"source": "FAPI-PAR.arazzo.yaml"})
        warned = {(w["rule"], w["path"]) for w in missing.json()["warnings"]}
        assert ("source_not_read", "sourceDescriptions.0.url") in warned
        assert ("source_not_read", "workflows.0.steps.0.operationId") in warned

        text = (oai / "pet-coupons.arazzo.yaml").read_text()
        broken = text.replace("operationId: getPetCoupons", "operationId: getPetCupons")
        (registry_root / "broken.arazzo.yaml").write_text(broken)
        answer = await client.post("/catalogs/validate", json={"source": "broken.arazzo.yaml"})
        refused = answer.json()
        assert refused["valid"] is False
        line = next(i for i, t in enumerate(broken.splitlines(), 1) if "getPetCupons" in t)
        assert {(v["rule"], v["path"], v["line"]) for v in refused["violations"]} == {
            ("unknown_operation", "workflows.0.steps.1.operationId", line)
        }
    assert not (registry_root / "catalogs").exists()


async def test_an_empty_name_and_a_missing_file_are_both_reported_the_file_first(
    settings: Settings, registry_root: Path
) -> None:
    """An empty catalog name once answered a regular expression and hid the missing file."""
    async with app_client(create_app(settings)) as client:
        for route in ("/catalogs/preview", "/catalogs"):
            answer = await client.post(
                route, json={"source": "nope/missing.yaml", "name": "", "prefix": "-x"}
            )
            assert answer.status_code == 422
            body = answer.json()
            assert body["error_code"] == "invalid_source"
            assert body["message"].startswith("no file at ")
            assert [(v["path"], v["rule"]) for v in body["violations"]] == [
                ("source", "not_found"),
                ("name", "pattern"),
                ("prefix", "pattern"),
            ]
            name = body["violations"][1]["message"]
            assert name == (
                "a catalog name is 1-64 letters, digits, '-' or '_', "
                "starting with a letter or digit"
            )
            assert "^" not in json.dumps(body["violations"])
        found = await client.post(
            "/catalogs/preview", json={"source": "petstore.json", "name": " "}
        )
        assert found.status_code == 422
        assert found.json()["violations"] == [{"path": "name", "rule": "pattern", "message": name}]
        # a newline after a name is no name (a pattern's '$' would let it pass)
        trailing = await client.post(
            "/catalogs/preview", json={"source": "petstore.json", "name": "pets\n"}
        )
        assert trailing.status_code == 422
    assert not (registry_root / "catalogs").exists()
