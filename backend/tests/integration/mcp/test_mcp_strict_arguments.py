"""Every MCP tool refuses missing, unknown and mistyped arguments before anything runs.

The cases are generated from ``tools/list`` (so a new tool is covered the day it appears):
for each tool, an empty object when it has required arguments, an unknown key, and for every
typed argument a value of another type. Each call must answer ``INVALID_INPUT`` (the markdown
tools: ``INVALID_REQUEST``, their ``error_type`` for arguments that do not fit) with a violation
naming the argument (never ``INTERNAL_ERROR``), and the registry, the workflows and the run
store must be exactly as before.
"""

from __future__ import annotations

from typing import Any

import httpx
import mcp_types as types

from dynamic_tools.markdown.tool_specs import TOOL_NAMES
from tests.support.mcp_client import error_payload, mcp_client

UNKNOWN = "zz_not_an_argument"
WRONG: dict[str, Any] = {
    "string": 12345,
    "integer": "twelve",
    "number": "twelve",
    "boolean": "yes",
    "array": "not-a-list",
    "object": "not-an-object",
}


def snapshot(url: str) -> dict[str, Any]:
    tools = httpx.get(f"{url}/tools").json()
    workflows = httpx.get(f"{url}/workflows").json()
    runs = httpx.get(f"{url}/runs", params={"limit": 500}).json()
    catalogs = httpx.get(f"{url}/catalogs").json()
    return {"tools": tools, "workflows": workflows, "runs": runs["total"], "catalogs": catalogs}


def wrong_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if None in kinds or "null" in kinds or not kinds:
        return None
    for candidate in ("string", "integer", "object", "array", "boolean"):
        value = WRONG[candidate]
        accepted = {"integer": ("integer", "number"), "number": ("number",)}.get(
            _type_of(value), (_type_of(value),)
        )
        if not any(k in accepted for k in kinds):
            return value
    return None


def _type_of(value: Any) -> str:
    return {int: "integer", str: "string", bool: "boolean", list: "array", dict: "object"}[
        type(value)
    ]


def cases(tool: types.Tool) -> list[tuple[str, dict[str, Any], str]]:
    """(what, arguments, the argument a violation must name)."""
    schema = tool.input_schema or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    required: list[str] = list(schema.get("required") or [])
    found = [("unknown key", {UNKNOWN: 1}, UNKNOWN)]
    if required:
        found.append(("empty object", {}, required[0]))
    for name, spec in properties.items():
        if not isinstance(spec, dict):
            continue
        value = wrong_value(spec)
        if value is not None:
            found.append((f"mistyped {name}", {name: value}, name))
    return found


async def test_every_tool_refuses_bad_arguments_and_changes_nothing(server: str) -> None:
    before = snapshot(server)
    checked = 0
    async with mcp_client(server) as client:
        tools: list[types.Tool] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        names = {t.name for t in tools}
        # Every layer is in the list this test walks.
        assert {"workflow.purge_history", "catalog.import_openapi", "load_workflow"} <= names
        assert any(n.startswith("w_") for n in names) and "search_flights" in names
        for tool in tools:
            for what, arguments, named in cases(tool):
                result = await client.call_tool(tool.name, arguments)
                data = dict(result.structured_content or error_payload(result) or {})
                where = f"{tool.name} ({what}): {data or result.content}"
                assert result.is_error, where
                markdown = tool.name in TOOL_NAMES
                wanted = "INVALID_REQUEST" if markdown else "INVALID_INPUT"
                assert data.get("error_code") == wanted, where
                assert ("error_type" in data) is markdown, where
                paths = [str(v.get("path", "")) for v in data.get("violations") or []]
                assert any(p == named or p.startswith(f"{named}.") for p in paths), where
                checked += 1
    assert checked >= 3 * len(tools) // 2
    assert snapshot(server) == before
