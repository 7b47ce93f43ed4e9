"""MCP tool layers: the one extension point of what a session sees.

A :class:`ToolLayer` adds its tools to a session's :class:`~dynamic_tools.mcp.entries.
SessionView`. :class:`~dynamic_tools.mcp.surface.McpSurface` builds a view by running its
layers, and caches it; adding a family of tools means writing one layer and listing it in
:func:`~dynamic_tools.mcp.surface.McpSurface.layers_for`.

Rules every layer keeps:

- **Order.** Layers run in the order the surface lists them, and ``tools/list`` shows tools in
  that order: core (one tool per API operation, ``{prefix}_query``, the planner
  ``{prefix}_plan``, ``{prefix}_execute``), recipes ``r_*``, workflows ``w_*`` and
  ``workflow.resume``, authoring ``workflow.*``, tasks, catalogs ``catalog.*``, listings,
  markdown workflows. A layer may read what earlier layers added (recipes read the API
  tools; the task layer reads the authoring tools), never what later ones add.
- **Duplicates.** Names are unique within a layer. Across layers the later layer's entry
  replaces the earlier one (a session's own workflow may shadow a server tool of the same
  name); every replacement is logged with both layers' names.
- **Errors.** A layer that cannot build its part raises a project error
  (:class:`~dynamic_tools.errors.DynamicToolsError`): the view is not built and the session's
  ``tools/list`` answers that error, mapped in ``mcp/errors.py``. Errors of a tool *call*
  are raised by the handler as project errors too and become tool results in
  ``mcp/errors.py`` only; a handler never builds an error payload itself.
- **No state of its own.** Stores and clients come from the composition root
  (``bootstrap.py``); a layer holds only what it derives, so the surface can rebuild views
  at any time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from dynamic_tools.mcp.entries import SessionView

__all__ = ["FunctionLayer", "ToolLayer"]


class ToolLayer(Protocol):
    """A family of tools a session can see (see the module's rules)."""

    #: the layer's name (logs, tests); its entries name their own kind (``ToolEntry.layer``)
    name: str

    async def extend(self, view: SessionView) -> None:
        """Add this layer's tools to ``view``."""
        ...


class FunctionLayer:
    """A layer made of one function that adds entries (sync or async)."""

    def __init__(self, name: str, add: Callable[[SessionView], Awaitable[None] | None]) -> None:
        self.name = name
        self._add = add

    async def extend(self, view: SessionView) -> None:
        """Run the function."""
        result = self._add(view)
        if result is not None:
            await result
