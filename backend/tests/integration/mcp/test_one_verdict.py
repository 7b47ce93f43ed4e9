"""REST, the CLI and MCP give the same verdict for the same document: call arguments checked
against the registry's tools, a saved workflow called as a sub-workflow with its params."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from dynamic_tools.cli.main import app
from tests.support.mcp_client import mcp_client

DRAFT = """\
domain: drafts
workflows:
  trip_for_two:
    params:
      date: {type: str, required: true, format: date}
    graph:
      first:
        workflow: book_flight
        args: {origin: AMS, destination: BCN, date: $date}
      pay:
        call: process_payment
        args: {booking: BK-1}
"""


def verdict(violations: list[dict[str, object]]) -> set[tuple[object, object, object]]:
    return {(v["path"], v["rule"], v["severity"]) for v in violations}


async def test_rest_cli_and_mcp_agree(
    server: str, travel_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rest = httpx.post(f"{server}/workflows/validate", json={"content": DRAFT}, timeout=30)
    async with mcp_client(server) as client:
        mcp = await client.call_tool("workflow.validate", {"content": DRAFT})
    draft = tmp_path / "draft.yaml"
    draft.write_text(DRAFT)
    monkeypatch.setenv("REGISTRY_CONFIG_PATH", str(travel_root / "config.yaml"))
    cli = CliRunner().invoke(app, ["validate", str(draft), "--json"])

    expected = {
        # book_flight (saved in the registry) needs a passenger
        ("workflows.trip_for_two.graph.first.args", "missing_argument", "error"),
        # process_payment takes booking_id, not booking
        ("workflows.trip_for_two.graph.pay.args", "missing_argument", "error"),
        ("workflows.trip_for_two.graph.pay.args.booking", "unknown_argument", "error"),
    }
    assert rest.status_code == 200, rest.text
    assert verdict(rest.json()["violations"]) == expected
    assert verdict(mcp.structured_content["violations"]) == expected
    assert cli.exit_code == 1, cli.output
    assert verdict(json.loads(cli.output)[str(draft)]) == expected
