"""dynamic-tools run / runs against a live server running the travel workflows over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from dynamic_tools.api.app import create_app
from dynamic_tools.cli.main import app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.servers import serve


def test_run_follows_progress_and_runs_show_lists_it(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml", seed_examples_from=EXAMPLES
    )
    runner = CliRunner()
    with serve(create_app(settings), port=settings.port) as url:
        result = runner.invoke(
            app,
            [
                "run",
                "book_flight",
                "--server",
                url,
                "-p",
                "origin=AMS",
                "-p",
                "destination=BCN",
                "-p",
                "date=2026-12-13",
                "-p",
                "passenger=Ada",
            ],
        )
        assert result.exit_code == 0, result.output
        assert "waitlist" in result.output and "run succeeded" in result.output
        assert "reserve skipped (not activated)" in result.output  # the 13th is sold out
        listed = runner.invoke(app, ["runs", "list", "--server", url])
        assert "book_flight" in listed.output and "succeeded" in listed.output
        bad = runner.invoke(app, ["run", "book_flight", "--server", url, "-p", "origin=AMS"])
        assert bad.exit_code == 1 and "params.passenger: 'passenger' is required" in bad.output
        missing = runner.invoke(app, ["runs", "show", "nope", "--server", url])
        assert missing.exit_code == 1 and "404" in missing.output
