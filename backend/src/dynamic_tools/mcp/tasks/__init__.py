"""MCP Tasks: the runtime, the task tools' flows, the 2026-07-28 extension and its client.

- :mod:`.runtime` — :class:`TaskRuntime`, the task requests on both revisions;
- :mod:`.flows` — :class:`TaskFlows`, the task-only tools (``workflow.author_and_run`` …);
- :mod:`.extension` — the ``io.modelcontextprotocol/tasks`` extension (2026-07-28);
- :mod:`.client` — :class:`TasksExtension` and :func:`call_task` for Python clients;
- :mod:`.link`, :mod:`.push`, :mod:`.views` — the client link, pushed notifications, task views.

Design: docs/mcp-tasks.md.
"""

from __future__ import annotations

from dynamic_tools.mcp.tasks.client import TasksExtension, call_task
from dynamic_tools.mcp.tasks.flows import TaskFlows
from dynamic_tools.mcp.tasks.runtime import TaskRuntime

__all__ = ["TaskFlows", "TaskRuntime", "TasksExtension", "call_task"]
