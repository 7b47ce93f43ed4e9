"""The schema lookup behind Mcp-Param header checks of 2026-07-28 tools/call (McpEndpoint)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest

from dynamic_tools.mcp.server import McpEndpoint


def _endpoint(views: list[dict[str, dict[str, Any]]], registry: dict[str, Any]) -> McpEndpoint:
    def view(schemas: dict[str, dict[str, Any]]) -> Any:
        entries = {
            n: SimpleNamespace(tool=types.Tool(name=n, input_schema=s)) for n, s in schemas.items()
        }
        return SimpleNamespace(entries=entries)

    class Registry(dict[str, Any]):
        def get(self, name: str, default: Any = None) -> Any:
            schema = self[name]
            return SimpleNamespace(input_schema=lambda: schema)

    surface: Any = SimpleNamespace(
        cached_views=lambda: [view(v) for v in views],
        services=SimpleNamespace(registry=Registry(registry)),
    )
    return McpEndpoint(surface)


PLAIN = {"type": "object", "properties": {"region": {"type": "string"}}}
ANNOTATED = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "R"}}}


@pytest.mark.parametrize(
    ("views", "registry", "expected"),
    [
        ([{"t": PLAIN}], {"t": PLAIN}, None),  # nothing to check: the SDK skips the listing
        ([{"t": PLAIN}, {"t": ANNOTATED}], {}, ANNOTATED),  # any view's annotation counts
        ([], {"t": ANNOTATED}, ANNOTATED),  # before any view is built: the registry's config
        ([{"u": ANNOTATED}], {}, None),  # another tool's annotation does not
    ],
)
def test_the_header_schema_is_the_annotated_one(
    views: list[dict[str, dict[str, Any]]], registry: dict[str, Any], expected: Any
) -> None:
    assert _endpoint(views, registry).header_schema("t") == expected
