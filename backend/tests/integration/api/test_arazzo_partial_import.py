"""Partial Arazzo imports: the workflows that convert are imported, the others reported.

The shop document (tests/fixtures/arazzo/semantics) gets four more workflows that cannot be
imported, each for another reason: an operation its source lacks (found by the check), a
retry of another step (found by the conversion), a string input fed to an integer argument
in strict mode (found by the workflow validator), and one that depends on a left-out
workflow. Preview reports each workflow; the import takes the others, or the ones chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.shop_api import shop_document

UNSUPPORTED = """
  - workflowId: ghost
    steps:
      - stepId: haunt
        operationId: noSuchOperation
  - workflowId: retry-elsewhere
    steps:
      - stepId: first
        operationId: warehouseStatus
        onFailure:
          - name: again
            type: retry
            retryAfter: 1
            stepId: second
      - stepId: second
        operationId: warehouseStatus
  - workflowId: typed
    inputs:
      type: object
      properties:
        count: {type: string}
    steps:
      - stepId: order
        operationId: createOrder
        requestBody:
          payload:
            item: I1
            quantity: $inputs.count
  - workflowId: after-ghost
    dependsOn: [ghost]
    steps:
      - stepId: status
        operationId: warehouseStatus
"""


@pytest.fixture
def settings(tmp_path: Path, make_settings: Any) -> Settings:
    made: Settings = make_settings(registry_config_path=tmp_path / "root" / "config.yaml")
    shop_document(made.registry_root / "mixed", workflows=UNSUPPORTED.lstrip("\n"))
    return made


def _options(settings: Settings, **more: Any) -> dict[str, Any]:
    source = str(settings.registry_root / "mixed" / "shop.arazzo.yaml")
    return {"source": source, "name": "shop", "base_url": "https://shop.example/api", **more}


async def test_preview_reports_each_workflow_and_the_import_takes_those_that_convert(
    settings: Settings,
) -> None:
    async with app_client(create_app(settings)) as client:
        preview = (await client.post("/catalogs/preview", json=_options(settings))).json()
        assert preview["valid"], preview["violations"]
        report = {w["workflow_id"]: w for w in preview["arazzo_workflows"]}
        assert {k for k, w in report.items() if w["imported"]} == {"login", "buy"}
        why = {k: [p["rule"] for p in w["problems"]] for k, w in report.items()}
        assert why["ghost"] == ["unknown_operation"]
        assert why["retry-elsewhere"] == ["retry_elsewhere"]
        assert why["typed"] == ["argument_type"]
        assert why["after-ghost"] == ["needs_left_out_workflow"]
        assert "runs workflow 'ghost'" in report["after-ghost"]["problems"][0]["message"]
        assert report["ghost"]["problems"][0]["path"] == "workflows.2.steps.0.operationId"
        assert report["ghost"]["problems"][0]["line"]
        left = [w for w in preview["warnings"] if w["rule"] == "workflow_left_out"]
        assert len(left) == 4
        imported = await client.post("/catalogs", json=_options(settings))
        assert imported.status_code == 201, imported.text
        body = imported.json()
        assert body["workflows"] == ["login", "buy"]
        assert {w["workflow_id"] for w in body["left_out"]} == {
            "ghost",
            "retry-elsewhere",
            "typed",
            "after-ghost",
        }
        # only the tools the imported workflows call
        tools = {t["name"] for t in (await client.get("/tools")).json()["tools"]}
        assert tools and all(t.startswith("shop_") for t in tools)
        assert (await client.get("/workflows/buy")).status_code == 200
        assert (await client.get("/workflows/ghost")).status_code == 404


async def test_chosen_workflows_are_imported_and_a_chosen_one_that_cannot_be_is_refused(
    settings: Settings,
) -> None:
    async with app_client(create_app(settings)) as client:
        only = await client.post("/catalogs", json=_options(settings, workflows=["login"]))
        assert only.status_code == 201, only.text
        assert only.json()["workflows"] == ["login"]
        left = {w["workflow_id"]: w["problems"][0]["rule"] for w in only.json()["left_out"]}
        assert left["buy"] == "not_chosen" and left["ghost"] == "not_chosen"
        tools = {t["name"] for t in (await client.get("/tools")).json()["tools"]}
        assert tools == {"shop_login"}
        # a chosen workflow brings the ones it runs (buy depends on login)
        both = await client.post(
            "/catalogs", json=_options(settings, name="both", workflows=["buy"], overwrite=True)
        )
        assert both.status_code == 409, both.text  # login is catalog shop's already
        assert "workflow 'login'" in both.text
        refused = await client.post(
            "/catalogs", json=_options(settings, name="other", workflows=["after-ghost"])
        )
        assert refused.status_code == 422, refused.text
        # after-ghost runs ghost, which cannot be imported: its problem refuses the import
        problems = refused.json()["violations"]
        assert [(v["rule"], v["path"]) for v in problems] == [
            ("unknown_operation", "workflows.2.steps.0.operationId")
        ], problems
        unknown = await client.post(
            "/catalogs/preview", json=_options(settings, name="other", workflows=["nope"])
        )
        problems = unknown.json()["violations"]
        assert problems[0]["rule"] == "unknown_workflow"
        assert "'buy'" in problems[0]["message"] and "'login'" in problems[0]["message"]
        assert (await client.get("/catalogs/other")).status_code == 404
