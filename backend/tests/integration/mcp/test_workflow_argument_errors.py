"""A ``w_*`` call's arguments are checked in one pass: a value outside an enum, a date that is
not one, a missing and an unknown argument come back in the same ``INVALID_INPUT`` answer
(before, the schema's findings came first and the date only once they were fixed), for a
session's own workflow (X-Workflow-URL) and for a server workflow alike, and nothing runs."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.mcp_client import error_payload, mcp_client

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
FLOWS = """\
domain: seats
workflows:
  search_cabin:
    description: Search flights in a cabin
    params:
      origin: { type: str, required: true }
      date: { type: str, required: true, format: date }
      cabin: { type: str, enum: [economy, business] }
    graph:
      search:
        call: search_flights
        args: { origin: $origin, destination: BCN, date: $date }
"""


def by_path(payload: dict[str, object]) -> dict[str, str]:
    violations = payload["violations"]
    assert isinstance(violations, list)
    return {v["path"]: v["rule"] for v in violations}


async def test_every_violation_of_a_session_workflow_call_comes_at_once(
    server: str, travel_root: Path
) -> None:
    (travel_root / "seats.yaml").write_text(FLOWS)
    headers = {"X-Workflow-URL": f"file://{travel_root / 'seats.yaml'}"}
    runs = httpx.get(f"{server}/runs").json()["total"]
    async with mcp_client(server, headers=headers) as client:
        result = await client.call_tool(
            "w_search_cabin", {"cabin": "first", "date": "2026-13-45", "seat": "1A"}
        )
    payload = error_payload(result)
    assert payload is not None and payload["error_code"] == "INVALID_INPUT"
    assert by_path(payload) == {
        "cabin": "enum",
        "date": "format",
        "origin": "required",
        "seat": "unknown",
    }
    assert httpx.get(f"{server}/runs").json()["total"] == runs  # nothing ran


async def test_every_violation_of_a_server_workflow_call_comes_at_once(server: str) -> None:
    async with mcp_client(server) as client:
        result = await client.call_tool(
            "w_book_flight", {"origin": "AMS", "destination": 7, "date": "2026-13-45"}
        )
    payload = error_payload(result)
    assert payload is not None and payload["error_code"] == "INVALID_INPUT"
    assert by_path(payload) == {"destination": "type", "date": "format", "passenger": "required"}
