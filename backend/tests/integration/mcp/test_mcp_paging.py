"""Long tool lists are paged (each answer stays under the SDK client's 1 MiB event limit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from mcp.shared.exceptions import MCPError

from tests.support.mcp_client import mcp_client


async def test_a_long_tool_list_comes_in_pages(
    start_server: Callable[..., str], travel_root: Path
) -> None:
    base = yaml.safe_load((travel_root / "tools" / "search_flights.yaml").read_text())
    clones = [{**base, "name": f"region{n:03d}_search_flights"} for n in range(450)]
    (travel_root / "tools" / "clones.yaml").write_text(yaml.safe_dump(clones))
    url = start_server()
    async with mcp_client(url) as client:
        first = await client.list_tools()
        second = await client.list_tools(cursor=first.next_cursor)
        with pytest.raises(MCPError) as bad:
            await client.list_tools(cursor="not-a-cursor")
        called = await client.call_tool(
            "region449_search_flights",
            {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
        )
    names = [t.name for t in first.tools + second.tools]
    assert len(first.tools) == 400 and first.next_cursor == "400"
    assert second.next_cursor is None
    assert len(names) == len(set(names)) and "region449_search_flights" in names
    assert "w_book_flight" in names and "api_query" in names
    assert bad.value.code == -32602
    assert not called.is_error
