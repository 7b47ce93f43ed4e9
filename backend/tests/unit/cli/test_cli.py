from pathlib import Path

from typer.testing import CliRunner

from dynamic_tools.cli.main import app
from tests.conftest import EXAMPLES, FIXTURES


def test_tools_list_shows_tools_and_exits_zero() -> None:
    result = CliRunner().invoke(app, ["tools", "list", "--directory", str(EXAMPLES / "tools")])
    assert result.exit_code == 0, result.output
    assert "search_flights" in result.output and "add_to_waitlist" in result.output


def test_tools_list_reports_problems_and_exits_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["tools", "list", "--directory", str(FIXTURES / "tools" / "mixed")]
    )
    assert result.exit_code == 1
    assert "03_bad_syntax.yaml" in result.output and "duplicate tool name" in result.output


def test_validate_exits_zero_on_the_examples_and_one_with_every_violation() -> None:
    runner = CliRunner()
    examples = sorted(str(p) for p in (EXAMPLES / "workflows").iterdir())
    ok = runner.invoke(app, ["validate", *examples, "--tools-dir", str(EXAMPLES / "tools")])
    assert ok.exit_code == 0, ok.output
    assert ok.output.count(": valid (0 error(s), 0 warning(s))") == len(examples)
    bad = FIXTURES / "workflows" / "invalid" / "many_violations.yaml"
    result = runner.invoke(
        app, ["validate", str(bad), "--tools-dir", str(EXAMPLES / "tools"), "--json"]
    )
    assert result.exit_code == 1
    assert '"rule": "unknown_tool"' in result.output and '"line": 11' in result.output


def test_validate_reports_an_unreadable_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 1 and "unreadable" in result.output
