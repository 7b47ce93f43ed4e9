"""The client configuration snippets of the README work as written (stdio and URL forms)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO
from tests.support.mcp_client import mcp_client

PLACEHOLDER = "/path/to/dynamic-tools"


def snippets() -> list[tuple[str, dict[str, Any]]]:
    """Every server entry of the JSON blocks under "Connecting a client"."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("### Connecting a client", 1)[1].split("\n## ", 1)[0]
    entries = []
    for block in re.findall(r"```json\n(.*?)```", section, re.DOTALL):
        data = json.loads(block)
        servers = data.get("mcpServers") or data.get("servers")
        entries += list(servers.items())
    return entries


def test_the_readme_has_stdio_and_url_snippets_for_three_clients() -> None:
    found = snippets()
    assert len(found) == 5
    assert sum("command" in entry for _, entry in found) == 2
    assert sum("url" in entry for _, entry in found) == 3
    assert sum("Authorization" in entry.get("headers", {}) for _, entry in found) == 1


@pytest.mark.parametrize(("name", "entry"), [s for s in snippets() if "command" in s[1]])
async def test_a_stdio_snippet_starts_a_working_server(
    name: str, entry: dict[str, Any], tmp_path: Path
) -> None:
    def local(text: str) -> str:  # the runtime directory goes to a temporary place
        return text.replace(f"{PLACEHOLDER}/.runtime", str(tmp_path)).replace(
            PLACEHOLDER, str(REPO)
        )

    env = {key: local(value) for key, value in entry["env"].items()}
    env["PATH"] = "/usr/bin:/bin"
    params = StdioServerParameters(command=local(entry["command"]), args=entry["args"], env=env)
    async with Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool(
            "search_flights", {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
        )
    assert {"w_book_flight", "api_query", "load_workflow"} <= tools
    assert not found.is_error and len(found.structured_content["result"]) == 3


PLAIN_URL = [s for s in snippets() if "url" in s[1] and "Authorization" not in s[1]["headers"]]
KEYED_URL = [s for s in snippets() if "url" in s[1] and "Authorization" in s[1]["headers"]]


@pytest.mark.parametrize(("name", "entry"), PLAIN_URL)
async def test_a_url_snippet_reaches_a_running_server(
    name: str, entry: dict[str, Any], server: str
) -> None:
    assert entry["url"] == "http://127.0.0.1:8000/mcp"
    base = entry["url"].replace("http://127.0.0.1:8000", server).removesuffix("/mcp")
    async with mcp_client(base, headers=entry.get("headers")) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert "travel_query" in tools and "w_book_flight" in tools


@pytest.mark.parametrize(("name", "entry"), KEYED_URL)
async def test_a_url_snippet_with_an_api_key_reaches_a_guarded_server(
    name: str, entry: dict[str, Any], start_server: Callable[..., str]
) -> None:
    token = "readme-admin-token-4d2"
    server = start_server(api_token=token)
    made = httpx.post(
        f"{server}/keys",
        json={"name": "cursor", "scopes": ["read", "run"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    key = made.json()["key"]
    shown = entry["headers"]["Authorization"]
    assert shown.startswith("Bearer dtk_") and "<the rest of the key>" in shown
    headers = {**entry["headers"], "Authorization": f"Bearer {key}"}
    base = entry["url"].replace("http://127.0.0.1:8000", server).removesuffix("/mcp")
    async with mcp_client(base, headers=headers) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert "travel_query" in tools and "w_book_flight" in tools
    refused = httpx.post(f"{server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
