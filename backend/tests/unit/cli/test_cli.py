from pathlib import Path

from tests.conftest import EXAMPLES, FIXTURES
from typer.testing import CliRunner

from dynamic_tools.cli.main import app


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
