"""OpenAPI import in a real browser: preview, a choice of operations, import, the tools it
registered, disable; a bad source shows its error."""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.integration.ui.conftest import screenshot

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "openapi" / "petstore-3.0.json"


def test_preview_choose_and_import(
    page: Page, ui_server: str, registry_root: Path, artifacts: Path
) -> None:
    shutil.copy(FIXTURE, registry_root / "petstore.json")
    page.goto(f"{ui_server}/ui/#/catalogs")
    form = page.get_by_test_id("catalog-import")
    form.get_by_label("Source").fill("missing.json")
    form.get_by_label("Catalog name").fill("pets")
    form.get_by_role("button", name="Preview").click()
    expect(page.get_by_test_id("error-box")).to_contain_text("POST /catalogs/preview")

    form.get_by_label("Source").fill("petstore.json")
    form.get_by_role("button", name="Preview").click()
    preview = page.get_by_test_id("catalog-preview")
    expect(preview).to_contain_text("Swagger Petstore")
    expect(preview).to_contain_text("GET /pet/{petId}")
    assert preview.locator("tbody input[type=checkbox]").count() > 5
    preview.get_by_role("button", name="Select none").click()
    preview.get_by_label("import getPetById").check()
    preview.get_by_label("import findPetsByStatus").check()
    screenshot(page, artifacts / "catalog-preview.png")
    preview.get_by_role("button", name="Import 2 operation(s)").click()

    expect(page.get_by_test_id("import-message")).to_contain_text("2 tool(s) registered")
    # The secret its tools need is said at once, with where to set it.
    expect(page.get_by_test_id("import-message")).to_contain_text(
        "need secret:PETS_TOKEN (set the environment variable DT_SECRET_PETS_TOKEN"
    )
    row = page.get_by_test_id("catalog-list").locator("tr[data-catalog=pets]")
    expect(row).to_contain_text("2 registered of 2")
    expect(row.get_by_test_id("catalog-secrets")).to_contain_text("secret:PETS_TOKEN is not set")
    page.goto(f"{ui_server}/ui/#/tools")
    expect(page.get_by_test_id("tool-getPetById")).to_contain_text("/pet/{petId}")
    auth = page.get_by_test_id("tool-getPetById").get_by_test_id("tool-auth")
    expect(auth).to_contain_text("secret:PETS_TOKEN is not set")
    expect(page.get_by_test_id("tool-addPet")).to_have_count(0)

    page.goto(f"{ui_server}/ui/#/catalogs")
    page.get_by_label("enable pets").click()  # applied when the server answers
    expect(row).to_contain_text("0 registered of 2")
