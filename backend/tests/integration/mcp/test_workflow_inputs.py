"""w_* input schemas say exactly what the params say (formats, enums, required, defaults),
and arguments are checked before a run starts: a bad date never reaches the API."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.support.mcp_client import mcp_client

FLOWS = """\
domain: inputs
workflows:
  cheapest_days:
    description: Search several days and keep the cheapest
    params:
      origin: {type: str, required: true}
      start_date: {type: str, required: true, format: date}
      num_days: {type: int, required: true, default: 7}
      cabin: {type: str, enum: [economy, business], default: economy}
    graph:
      search:
        call: search_flights
        args: {origin: $origin, destination: BCN, date: $start_date}
"""


async def test_schemas_carry_the_params_and_arguments_are_checked_first(
    server: str, travel_root: Path
) -> None:
    (travel_root / "inputs.yaml").write_text(FLOWS)
    headers = {"X-Workflow-URL": f"file://{travel_root / 'inputs.yaml'}"}
    before = httpx.get(f"{server}/runs", timeout=10).json()
    async with mcp_client(headers=headers, base_url=server) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "w_cheapest_days")
        bad_date = await client.call_tool(
            "w_cheapest_days", {"origin": "AMS", "start_date": "not-a-date", "num_days": 3}
        )
        no_days = await client.call_tool(
            "w_cheapest_days", {"origin": "AMS", "start_date": "2026-12-01"}
        )
        bad_cabin = await client.call_tool(
            "w_cheapest_days",
            {"origin": "AMS", "start_date": "2026-12-01", "num_days": 3, "cabin": "first"},
        )
        fine = await client.call_tool(
            "w_cheapest_days", {"origin": "AMS", "start_date": "2026-12-01", "num_days": 3}
        )
    schema = tool.input_schema
    assert schema["required"] == ["origin", "start_date", "num_days"]
    assert schema["properties"]["start_date"]["format"] == "date"
    assert schema["properties"]["num_days"] == {"type": "integer", "default": 7}
    assert schema["properties"]["cabin"]["enum"] == ["economy", "business"]
    for refused, field in ((bad_date, "start_date"), (no_days, "num_days"), (bad_cabin, "cabin")):
        assert refused.is_error, refused.content
        payload = json.loads(refused.content[0].text.split("\n", 1)[1])
        assert field in json.dumps(payload["violations"]), payload
    assert "is not a valid date (YYYY-MM-DD)" in bad_date.content[0].text
    assert not fine.is_error, fine.content
    after = httpx.get(f"{server}/runs", timeout=10).json()
    assert len(after["runs"]) == len(before["runs"]) + 1  # only the valid call started a run
