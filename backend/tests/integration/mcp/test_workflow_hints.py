"""A ``w_*`` tool's behaviour hints come from every call its workflow can make.

Through the real ``mcp`` client: the workflow specification's own read-only workflows
(``{prefix}_query`` only; a search fan-out and ``sql_query``) are read-only and not
destructive; a workflow that books is neither read-only nor destructive (its POST tools add);
one that cancels is destructive (the tool says so); and a workflow running a sub-workflow
takes the sub-workflow's calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.support.mcp_client import mcp_client

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
SEED001 = (FIXTURES / "workflows" / "seeds" / "seed001_full.yaml").read_text()
EXTRA = """\
  cancel:
    description: "Cancel a booking (its tool says it is destructive)"
    params:
      booking_id: { type: str, required: true }
    graph:
      undo:
        call: cancel_booking
        args: { booking_id: $booking_id }
  status_then_cancel:
    description: "Check the status, then cancel (through a sub-workflow)"
    params:
      booking_id: { type: str, required: true }
    graph:
      status:
        workflow: check_flight_status
        args: { flight_number: "AA1" }
      cancel:
        depends_on: [status]
        workflow: cancel
        args: { booking_id: $booking_id }
  status_twice:
    description: "Ask for the status, pause, ask again (all read-only)"
    params:
      flight_number: { type: str, required: true }
    graph:
      first:
        workflow: check_flight_status
        args: { flight_number: $flight_number }
      ask:
        type: yield
        depends_on: [first]
        message: "Again?"
        expects: { again: bool }
      again:
        depends_on: [ask]
        call: rest_call
        args: { method: GET, base_url: "http://127.0.0.1:9", path: "/flights" }
"""


async def test_hints_follow_what_each_workflow_calls(server: str, travel_root: Path) -> None:
    text = SEED001.replace("\nworkflows:\n", "\nworkflows:\n" + EXTRA, 1)
    (travel_root / "seed001.yaml").write_text(text)
    headers = {
        "X-Workflow-URL": f"file://{travel_root / 'seed001.yaml'}",
        "X-API-Name": "flights",
    }
    async with mcp_client(server, headers=headers) as client:
        tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
    hints = {
        name: (a.read_only_hint, a.destructive_hint)
        for name, a in tools.items()
        if name.startswith("w_") and a is not None
    }
    assert hints["w_check_flight_status"] == (True, False)  # flights_query only
    assert hints["w_find_cheapest_across_dates"] == (True, False)  # search + sql_query
    assert hints["w_status_twice"] == (True, False)  # sub-workflow, yield, GET rest_call
    assert hints["w_book_flight"] == (False, False)  # POSTs that add (as their tools say)
    assert hints["w_cancel"] == (False, True)  # cancel_booking: annotated destructive
    assert hints["w_status_then_cancel"] == (False, True)  # through its sub-workflow
