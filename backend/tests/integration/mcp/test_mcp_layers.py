"""Tool layers are the one extension point: a new layer's tools are listed and callable, later
layers replace earlier names (logged), a failing layer fails the listing with a mapped error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
import pytest

from dynamic_tools.errors import ConfigurationError
from dynamic_tools.mcp.entries import Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.mcp.layers import ToolLayer
from dynamic_tools.mcp.results import data_result
from dynamic_tools.mcp.surface import McpSurface
from tests.support.mcp_client import call, mcp_client

FLIGHT = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


class EchoLayer:
    """A toy family of tools: ``echo.say`` answers its argument."""

    name = "echo"

    async def extend(self, view: SessionView) -> None:
        async def say(call: ToolCall) -> Result:
            return data_result({"said": call.arguments["text"]}, call.arguments["text"])

        tool = types.Tool(
            name="echo.say",
            description="Answer the text given.",
            input_schema={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
        )
        view.add(ToolEntry(tool, "echo", say))


class FailingLayer:
    name = "broken"

    async def extend(self, view: SessionView) -> None:
        raise ConfigurationError("the broken layer has no configuration")


def with_layer(monkeypatch: pytest.MonkeyPatch, layer: ToolLayer) -> None:
    original = McpSurface.layers_for

    def layers_for(self: McpSurface, services: Any) -> list[ToolLayer]:
        return [*original(self, services), layer]

    monkeypatch.setattr(McpSurface, "layers_for", layers_for)


async def test_a_new_layer_is_listed_after_the_others_and_callable(
    monkeypatch: pytest.MonkeyPatch, start_server: Callable[..., str]
) -> None:
    with_layer(monkeypatch, EchoLayer())
    server = start_server()
    async with mcp_client(server) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        answer = await call(client, "echo.say", text="hello")
        refused = await call(client, "echo.say", text="hello", extra=1)
    assert names[-1] == "echo.say" and "w_book_flight" in names
    assert answer == {"said": "hello", "is_error": False}
    assert refused["is_error"] and refused["error_code"] == "INVALID_INPUT"


async def test_a_later_layer_replaces_an_earlier_name(
    monkeypatch: pytest.MonkeyPatch, start_server: Callable[..., str]
) -> None:
    class Shadow:
        name = "shadow"

        async def extend(self, view: SessionView) -> None:
            async def mine(call: ToolCall) -> Result:
                return data_result({"from": "shadow"}, "shadow")

            tool = view.entries["w_book_flight"].tool.model_copy(update={"output_schema": None})
            view.add(ToolEntry(tool, "shadow", mine))

    with_layer(monkeypatch, Shadow())
    server = start_server()
    async with mcp_client(server) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        answer = await client.call_tool("w_book_flight", FLIGHT)
    assert names.count("w_book_flight") == 1
    assert not answer.is_error and "shadow" in answer.content[0].text  # type: ignore[union-attr]


async def test_a_failing_layer_fails_the_listing_with_its_mapped_error(
    monkeypatch: pytest.MonkeyPatch, start_server: Callable[..., str]
) -> None:
    with_layer(monkeypatch, FailingLayer())
    server = start_server()
    async with mcp_client(server) as client:
        with pytest.raises(Exception) as failed:
            await client.list_tools()
    assert "the broken layer has no configuration" in str(failed.value)
