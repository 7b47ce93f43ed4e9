"""Assembles the MCP endpoint: the surface (tool layers), resources and their extensions."""

from __future__ import annotations

from dynamic_tools.mcp.resources import ResourceSet
from dynamic_tools.mcp.server import McpEndpoint
from dynamic_tools.mcp.surface import McpSurface
from dynamic_tools.settings import Settings


def build_mcp_endpoint(settings: Settings) -> McpEndpoint:
    """A new endpoint for ``settings`` (no I/O; it serves once the surface is attached)."""
    surface = McpSurface()
    resources = ResourceSet()
    surface.resources = resources
    return McpEndpoint(surface, resources)
