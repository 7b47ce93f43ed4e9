"""``dynamic-tools import-arazzo`` and ``export-arazzo``: a document's tools and workflows
written to the registry; a workflow written as Arazzo with its OpenAPI description; bad
arguments named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from dynamic_tools.cli.main import app
from dynamic_tools.definitions.arazzo.validation import check_arazzo
from tests.conftest import EXAMPLES, FIXTURES


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(EXAMPLES, root)
    monkeypatch.setenv("REGISTRY_CONFIG_PATH", str(root / "config.yaml"))
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PUBLIC_BASE_URL", "http://127.0.0.1:8000")
    return root


def test_import_arazzo_writes_the_tools_and_the_workflows(registry: Path, tmp_path: Path) -> None:
    document = tmp_path / "docs" / "shop.arazzo.yaml"
    shutil.copytree(FIXTURES / "arazzo" / "semantics", document.parent)
    result = CliRunner().invoke(
        app,
        [
            "import-arazzo",
            str(document),
            "--catalog",
            "shop",
            "--base-url",
            "https://shop.example.com/api",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    imported = json.loads(result.output)
    assert imported["workflows"] == ["login", "buy"] and imported["command_count"] == 7
    saved = yaml.safe_load((registry / "workflows" / "shop.arazzo.yaml").read_text())
    assert set(saved["workflows"]) == {"login", "buy"}
    assert (registry / "catalogs" / "shop.tools.json").is_file()


def test_import_arazzo_takes_the_chosen_workflow_and_says_what_is_left_out(
    registry: Path, tmp_path: Path
) -> None:
    document = tmp_path / "docs" / "shop.arazzo.yaml"
    shutil.copytree(FIXTURES / "arazzo" / "semantics", document.parent)
    options = ["--catalog", "shop", "--base-url", "https://shop.example.com/api"]
    result = CliRunner().invoke(
        app, ["import-arazzo", str(document), *options, "--workflow", "login"]
    )
    assert result.exit_code == 0, result.output
    assert "left out workflow buy: not among the workflows chosen" in result.output
    saved = yaml.safe_load((registry / "workflows" / "shop.arazzo.yaml").read_text())
    assert set(saved["workflows"]) == {"login"}


def test_import_arazzo_names_a_bad_source_option_and_strict_mode_problems(
    registry: Path,
) -> None:
    fixture = FIXTURES / "arazzo" / "runner" / "sample_login_workflow" / "login_workflow.yaml"
    bad = CliRunner().invoke(
        app, ["import-arazzo", str(fixture), "--catalog", "x", "--source", "nothing"]
    )
    assert bad.exit_code == 2 and "NAME=PATH_OR_URL" in bad.output
    strict = CliRunner().invoke(app, ["import-arazzo", str(fixture), "--catalog", "x", "--json"])
    assert strict.exit_code == 1
    problems = json.loads(strict.output)["violations"]
    # the fixture's shortcuts are refused without --lenient, each with its place and line
    shortcut = next(p for p in problems if "$steps.loginStep.token" in p["message"])
    assert shortcut["path"] == "workflows.0.outputs.token" and shortcut["line"] == 54
    assert not (registry / "catalogs" / "x.yaml").exists()


def test_export_arazzo_writes_a_valid_document_and_its_openapi(
    registry: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["export-arazzo", "book_flight", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "compensate_with (cancel_booking) has no Arazzo equivalent" in result.output
    text = (out / "book_flight.arazzo.yaml").read_text()
    openapi = yaml.safe_load((out / "tools.openapi.yaml").read_text())
    check = check_arazzo(text, name="book_flight.arazzo.yaml", sources={"tools": openapi})
    assert check.valid, check.violations
    missing = CliRunner().invoke(app, ["export-arazzo", "no_such_flow", "--out", str(out)])
    assert missing.exit_code == 1 and "no_such_flow" in missing.output
