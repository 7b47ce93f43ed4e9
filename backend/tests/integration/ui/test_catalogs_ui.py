"""OpenAPI import in a real browser: preview, a choice of operations, import, the tools it
registered, disable; a bad source shows its error. An Arazzo document: its workflows previewed,
imported, linked, and one run from the UI against a loopback API."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, Locator, Page, expect
from starlette.applications import Starlette
from starlette.routing import Route

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.integration.ui.conftest import screenshot
from tests.support.servers import serve
from tests.support.shop_api import Shop, shop_document

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


SEMANTICS = Path(__file__).resolve().parents[2] / "fixtures" / "arazzo" / "semantics"


def test_an_arazzo_document_imports_with_its_workflows_and_one_runs_from_the_ui(
    page: Page,
    make_settings: Callable[..., Settings],
    registry_root: Path,
    artifacts: Path,
) -> None:
    shop = Shop()
    app = Starlette(routes=[Route("/{path:path}", shop.handle, methods=["GET", "POST"])])
    with serve(app) as shop_url:
        shutil.copytree(SEMANTICS, registry_root / "semantics")
        settings = make_settings(allowed_target_hosts=[shop_url.split("://")[1]])
        with serve(create_app(settings), port=settings.port) as url:
            page.goto(f"{url}/ui/#/catalogs")
            form = page.get_by_test_id("catalog-import")
            form.get_by_label("Source").fill("semantics/shop.arazzo.yaml")
            form.get_by_label("Catalog name").fill("shop")
            form.get_by_label("Base URL").fill(f"{shop_url}/api")
            form.get_by_role("button", name="Preview").click()
            preview = page.get_by_test_id("catalog-preview")
            expect(preview.get_by_test_id("arazzo-workflows")).to_contain_text("login")
            expect(preview.get_by_test_id("arazzo-workflows")).to_contain_text("buy")
            expect(preview).to_contain_text("GET /items/{itemId}")
            screenshot(page, artifacts / "arazzo-preview.png")
            preview.get_by_role("button", name="Import 7 tool(s) and 2 workflow(s)").click()
            message = page.get_by_test_id("import-message")
            expect(message).to_contain_text("7 tool(s) registered and 2 workflow(s)")
            message.get_by_role("link", name="w_buy").click()

            expect(page.get_by_test_id("workflow-graph")).to_be_visible()
            page.goto(f"{url}/ui/#/workflows/buy?run=1")
            page.reload()
            params = page.get_by_test_id("run-params")
            params.get_by_label("user").fill("ada")
            params.get_by_label("password").fill("pw")
            params.get_by_label("itemId").fill("I1")
            params.get_by_label("quantity").fill("2")
            params.get_by_role("button", name="Start run").click()
            expect(page.get_by_test_id("run-status")).to_contain_text("succeeded")
            graph = page.get_by_test_id("workflow-graph")
            expect(graph.get_by_test_id("graph-node-poll")).to_be_visible()
            screenshot(page, artifacts / "arazzo-run.png")
    assert [r["path"] for r in shop.requests].count("/orders/O-1") == 3  # the loop polled


def test_an_arazzo_preview_says_which_workflows_are_left_out_and_imports_the_ones_chosen(
    page: Page,
    make_settings: Callable[..., Settings],
    registry_root: Path,
) -> None:
    ghost = (
        "  - workflowId: ghost\n    steps:\n      - {stepId: haunt, operationId: noSuchOperation}\n"
    )
    shop_document(registry_root / "mixed", workflows=ghost)
    settings = make_settings()
    with serve(create_app(settings), port=settings.port) as url:
        page.goto(f"{url}/ui/#/catalogs")
        form = page.get_by_test_id("catalog-import")
        form.get_by_label("Source").fill("mixed/shop.arazzo.yaml")
        form.get_by_label("Catalog name").fill("shop")
        form.get_by_label("Base URL").fill("https://shop.example.com/api")
        form.get_by_role("button", name="Preview").click()
        report = page.get_by_test_id("arazzo-workflow-report")
        expect(report).to_contain_text("left out: ")
        expect(report).to_contain_text("no operation 'noSuchOperation'")
        expect(report.get_by_label("import workflow ghost")).to_be_disabled()
        report.get_by_label("import workflow buy").uncheck()
        preview = page.get_by_test_id("catalog-preview")
        preview.get_by_role("button", name="Import 1 workflow(s) and the tools they call").click()
        expect(page.get_by_test_id("import-message")).to_contain_text("and 1 workflow(s)")
        expect(page.get_by_test_id("imported-workflows")).to_contain_text("w_login")


OAI = Path(__file__).resolve().parents[2] / "fixtures" / "arazzo" / "oai"


def upload_pet_coupons(page: Page, url: str) -> Locator:
    """The Catalogs page with the pet-coupons Arazzo document and its OpenAPI source chosen as
    uploaded files, to be imported as ``couponsdesk`` under the prefix ``cdesk_``; the form."""
    page.goto(f"{url}/ui/#/catalogs")
    form = page.get_by_test_id("catalog-import")
    form.get_by_label("uploaded files").check()
    form.get_by_label("Document file").set_input_files(OAI / "pet-coupons.arazzo.yaml")
    form.get_by_label("Files it refers to", exact=True).set_input_files(
        OAI / "pet-coupons.openapi.yaml"
    )
    form.get_by_label("Catalog name").fill("couponsdesk")
    form.get_by_label("Tool prefix").fill("cdesk_")
    form.get_by_label("Base URL").fill("https://pets.example.com/v1")
    return form


def test_an_uploaded_arazzo_document_with_its_source_imports_under_its_prefix(
    page: Page, ui_server: str, artifacts: Path
) -> None:
    form = upload_pet_coupons(page, ui_server)
    expect(form.get_by_test_id("catalog-related")).to_contain_text("pet-coupons.openapi.yaml")
    form.get_by_role("button", name="Preview").click()
    preview = page.get_by_test_id("catalog-preview")
    report = preview.get_by_test_id("arazzo-workflow-report")
    expect(report).to_contain_text("apply-coupon")
    expect(report).to_contain_text("left out")  # strict: its loose parameter names refused
    expect(preview).to_contain_text("cdesk_findPetsByStatus")
    expect(page.get_by_test_id("import-reason")).to_have_count(0)

    form.get_by_label("Lenient Arazzo").check()  # the preview no longer says what is imported
    importer = preview.get_by_role("button", name="Import 2 tool(s) and 2 workflow(s)")
    expect(importer).to_be_disabled()
    expect(page.get_by_test_id("import-reason")).to_have_text(
        "The form changed since this preview: preview again."
    )
    form.get_by_role("button", name="Preview").click()
    expect(report).not_to_contain_text("left out")
    expect(preview).to_contain_text("cdesk_getPetCoupons")
    screenshot(page, artifacts / "catalog-upload-preview.png")
    preview.get_by_role("button", name="Import 4 tool(s) and 3 workflow(s)").click()
    expect(page.get_by_test_id("import-message")).to_contain_text(
        "4 tool(s) registered and 3 workflow(s)"
    )
    row = page.get_by_test_id("catalog-list").locator("tr[data-catalog=couponsdesk]")
    expect(row).to_contain_text("(prefix cdesk_)")
    expect(row).to_contain_text("couponsdesk.upload/pet-coupons.arazzo.yaml")


def test_the_sources_of_an_arazzo_document_can_come_as_a_folder(
    page: Page, ui_server: str, tmp_path: Path
) -> None:
    """The folder input: each file keeps its path inside the folder (here, at its top)."""
    folder = tmp_path / "sources"
    folder.mkdir()
    shutil.copy(OAI / "pet-coupons.openapi.yaml", folder / "pet-coupons.openapi.yaml")
    page.goto(f"{ui_server}/ui/#/catalogs")
    form = page.get_by_test_id("catalog-import")
    form.get_by_label("uploaded files").check()
    form.get_by_label("Document file").set_input_files(OAI / "pet-coupons.arazzo.yaml")
    form.get_by_label("Folder of files it refers to").set_input_files(folder)
    expect(form.get_by_test_id("catalog-related")).to_contain_text("pet-coupons.openapi.yaml")
    form.get_by_label("Catalog name").fill("coupons-from-a-folder")
    form.get_by_label("Tool prefix").fill("cf_")
    form.get_by_label("Base URL").fill("https://pets.example.com/v1")
    form.get_by_role("button", name="Preview").click()
    preview = page.get_by_test_id("catalog-preview")
    expect(preview).to_contain_text("cf_findPetsByStatus")
    expect(preview.get_by_test_id("arazzo-workflow-report")).to_contain_text("buy-available-pet")


PHONE = {"width": 390, "height": 844}


def test_a_pasted_document_whose_names_clash_says_why_import_waits_and_fits_a_phone(
    browser: Browser, ui_server: str, artifacts: Path
) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{ui_server}/ui/#/catalogs")
        form = page.get_by_test_id("catalog-import")
        form.get_by_label("pasted text").check()
        form.get_by_label("Document text").fill(FIXTURE.read_text())
        form.get_by_label("Catalog name").fill("pets")
        form.get_by_role("button", name="Preview").click()
        preview = page.get_by_test_id("catalog-preview")
        preview.get_by_role("button", name="Import 18 operation(s)").click()
        expect(page.get_by_test_id("import-message")).to_contain_text("18 tool(s) registered")

        # Another catalog with the same tools: each name and what it clashes with, listed.
        form.get_by_label("Catalog name").fill("pets-again")
        form.get_by_role("button", name="Preview").click()
        conflicts = preview.get_by_test_id("catalog-conflicts")
        expect(conflicts).to_contain_text("18 name(s) clash")
        expect(conflicts.locator("li[data-conflict=getPetById]")).to_have_text(
            "getPetById (tool) — clashes with catalog 'pets': give a tool prefix, or disable "
            "or remove catalog 'pets'"
        )
        expect(preview.get_by_text("warning(s)")).to_be_visible()
        preview.get_by_text("warning(s)").click()  # the long warnings open
        importer = preview.get_by_role("button", name="Import 18 operation(s)")
        expect(importer).to_be_disabled()
        reason = page.get_by_test_id("import-reason")
        expect(reason).to_contain_text("18 name(s) clash (listed above)")
        expect(reason).to_contain_text("another tool prefix or catalog name")
        width = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert width[0] <= width[1], width
        screenshot(page, artifacts / "catalog-conflicts-phone.png")
        preview.get_by_label("replace an existing catalog of this name").check()
        expect(importer).to_be_disabled()  # overwrite replaces a catalog, not another's tools

        # The same name: the catalog exists, and overwrite settles it.
        preview.get_by_label("replace an existing catalog of this name").uncheck()
        form.get_by_label("Catalog name").fill("pets")
        form.get_by_role("button", name="Preview").click()
        expect(conflicts.locator("li")).to_have_count(1)
        expect(conflicts).to_contain_text("pets (catalog) — clashes with catalog 'pets'")
        expect(importer).to_be_disabled()
        expect(reason).to_have_text(
            "Catalog pets exists: tick “replace an existing catalog of this name”, or choose "
            "another name and preview again."
        )
        preview.get_by_label("replace an existing catalog of this name").check()
        expect(reason).to_have_count(0)
        preview.get_by_role("button", name="Select none").click()
        expect(reason).to_have_text("Choose at least one operation.")
        preview.get_by_label("import getPetById").check()
        preview.get_by_role("button", name="Import 1 operation(s)").click()
        expect(page.get_by_test_id("import-message")).to_contain_text("1 tool(s) registered")
        width = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert width[0] <= width[1], width
    finally:
        context.close()
