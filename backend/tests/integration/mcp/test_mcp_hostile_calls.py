"""MCP calls whose request HTTP cannot carry answer a structured error, never INTERNAL_ERROR."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import FIXTURES
from tests.support.mcp_client import mcp_client

SEARCH = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}


@pytest.fixture
def noted_server(travel_root: Path, start_server: Callable[..., str]) -> str:
    """The travel server, plus a demo operation with a header parameter."""
    shutil.copy(FIXTURES / "tools" / "hostile" / "noted_search.yaml", travel_root / "tools")
    return start_server()


@pytest.mark.parametrize("via", ["tool", "api_execute"])
async def test_a_header_value_http_cannot_carry_is_a_validation_error(
    noted_server: str, via: str
) -> None:
    arguments = {**SEARCH, "X-Note": "café"}
    async with mcp_client(noted_server) as client:
        if via == "tool":
            result = await client.call_tool("noted_search", arguments)
        else:
            result = await client.call_tool(
                "api_execute", {"operation": "noted_search", "arguments": arguments}
            )
    assert result.is_error
    error = result.structured_content
    assert error["error_code"] != "INTERNAL_ERROR", error
    assert error["category"] == "validation"
    assert "X-Note" in error["message"] and error["violations"][0]["path"] == "X-Note"


async def test_a_session_header_http_cannot_carry_is_refused_by_name(noted_server: str) -> None:
    # Invalid session headers are a protocol error naming the header (as a bad X-API-Type).
    headers = {"X-Target-Headers": json.dumps({"X-Team": "équipe"})}
    async with mcp_client(noted_server, headers=headers) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("search_flights", SEARCH)
    assert refused.value.code == -32602
    assert "X-Team" in refused.value.message and "ASCII" in refused.value.message
