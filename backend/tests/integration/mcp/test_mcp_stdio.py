"""``dynamic-tools mcp`` over stdio with the SDK client, as a desktop client launches it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.support.servers import free_port

BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def stdio_params(travel_root: Path, tmp_path: Path) -> StdioServerParameters:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "REGISTRY_CONFIG_PATH": str(travel_root / "config.yaml"),
        "DATA_DIR": str(tmp_path / "data"),
        "PORT": str(free_port()),  # only names the in-process demo API's origin
        "LOG_LEVEL": "WARNING",
    }
    return StdioServerParameters(
        command=str(Path(sys.executable).with_name("dynamic-tools")), args=["mcp"], env=env
    )


async def test_stdio_lists_calls_and_runs_a_durable_workflow(
    travel_root: Path, tmp_path: Path
) -> None:
    async with Client(stdio_params(travel_root, tmp_path), mode="legacy") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert {"search_flights", "api_query", "w_book_flight"} <= listed
        found = await client.call_tool(
            "search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        )
        assert not found.is_error and len(found.structured_content["result"]) == 3
        booked = await client.call_tool("w_book_flight", BOOK)
    assert not booked.is_error, booked.content
    assert booked.structured_content["status"] == "succeeded"
    assert booked.structured_content["result"]["status"] == "reserved"


async def test_stdio_errors_get_a_fresh_correlation_id_per_request(
    travel_root: Path, tmp_path: Path
) -> None:
    async with Client(stdio_params(travel_root, tmp_path), mode="legacy") as client:
        first = await client.call_tool("workflow.get", {"workflow_id": "nope"})
        second = await client.call_tool("workflow.get", {"workflow_id": "nope"})
    ids = [r.structured_content["correlation_id"] for r in (first, second)]
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids) and ids[0] != ids[1]
    assert [r.structured_content["error_code"] for r in (first, second)] == ["NOT_FOUND"] * 2
