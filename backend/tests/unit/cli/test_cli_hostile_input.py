"""The command line on hostile files: a violation and exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dynamic_tools.cli.main import app
from tests.conftest import EXAMPLES
from tests.support.hostile import fenced, nested_json, nested_object_json, ref_bomb_text


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", nested_object_json(10_000)),
        ("deep_array.json", nested_json(10_000)),
        ("deep.yaml", nested_json(10_000)),
        ("deep.xml", "<workflows>" + "<a>" * 10_000 + "</a>" * 10_000 + "</workflows>"),
    ],
)
def test_validate_reports_a_document_nested_10000_deep_as_a_violation(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = CliRunner().invoke(
        app, ["validate", str(path), "--tools-dir", str(EXAMPLES / "tools"), "--json"]
    )
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert '"rule": "max_depth"' in result.output


@pytest.mark.parametrize(
    "source", ["~nosuchuser/x.json", "http://127.0.0.1:1:2/openapi.json", "x" * 5000]
)
def test_import_openapi_names_an_unusable_source(
    source: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REGISTRY_CONFIG_PATH", str(tmp_path / "config.yaml"))
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["import-openapi", source, "--catalog", "x", "--json"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert '"error_code": "invalid_source"' in result.output


_CLI = """
import json, sys
from typer.testing import CliRunner
from dynamic_tools.cli.main import app
result = CliRunner().invoke(app, sys.argv[1:])
print(json.dumps({"exit_code": result.exit_code, "output": result.output}))
"""


def test_import_openapi_refuses_a_ref_bomb(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.json"
    bomb.write_text(ref_bomb_text(8, 10))
    # Fenced (the CLI converts in-process): before the fix, this bomb took 23 GB.
    result = fenced(
        _CLI,
        "import-openapi",
        str(bomb),
        "--catalog",
        "b",
        "--json",
        env={
            "REGISTRY_CONFIG_PATH": str(tmp_path / "config.yaml"),
            "DATA_DIR": str(tmp_path / "data"),
        },
    )
    assert result["exit_code"] == 1, result["output"]
    assert "max_schema_bytes" in result["output"]
    assert not (tmp_path / "catalogs" / "b.tools.json").exists()
