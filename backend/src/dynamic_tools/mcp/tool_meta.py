"""Routing metadata in every tool's ``_meta``: ``execution_type`` and ``http_method``.

The MCP authoring design asks every tool definition to say how it executes. The values:

| ``execution_type`` | what a call does | ``http_method`` |
|---|---|---|
| ``http`` | one request to the API, built from the registry (API tools, recipes, ``_execute``) | the operation's method (``null`` for ``_execute``: the operation's) |
| ``llm`` | an LLM picks the operation, then one request (``_query``) | ``null`` |
| ``workflow`` | a run on the workflow engine (``w_*``, ``workflow.resume``, ``workflow.run``) | ``null`` |
| ``task`` | an MCP task (``workflow.execute``, ``workflow.author_and_run``, ``workflow.repair_and_rerun``) | ``null`` |
| ``local`` | answered by this server, no call to the API (planner, authoring, catalogs, lists, markdown) | ``null`` |
"""  # noqa: E501

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dynamic_tools.mcp.entries import SessionView, ToolEntry

EXECUTION_TYPE = "execution_type"
HTTP_METHOD = "http_method"

_BY_LAYER = {
    "api": "http",
    "recipe": "http",
    "workflow": "workflow",
    "task": "task",
    "planner": "local",
    "authoring": "local",
    "catalog": "local",
    "markdown": "local",
}


def routing_meta(entry: ToolEntry, view: SessionView) -> dict[str, Any]:
    """``{execution_type, http_method}`` of one entry of ``view``."""
    name = entry.tool.name
    meta = entry.tool.meta or {}
    if EXECUTION_TYPE in meta:  # set where the tool was made (recipes know their operation)
        return {EXECUTION_TYPE: meta[EXECUTION_TYPE], HTTP_METHOD: meta.get(HTTP_METHOD)}
    config = view.api_tools.get(name) if entry.layer == "api" else None
    if entry.layer == "core":
        kind = "llm" if name == f"{view.prefix}_query" else "http"
    elif name == "workflow.run":
        kind = "workflow"
    else:
        kind = _BY_LAYER.get(entry.layer, "local")
    return {EXECUTION_TYPE: kind, HTTP_METHOD: config.api.method if config else None}


def add_routing_meta(view: SessionView) -> None:
    """Give every tool of ``view`` its routing metadata (the entries are updated in place)."""
    for name, entry in view.entries.items():
        routing = routing_meta(entry, view)
        meta = entry.tool.meta or {}
        if all(meta.get(k) == v and k in meta for k, v in routing.items()):
            continue
        tool = entry.tool.model_copy(update={"meta": {**meta, **routing}})
        view.entries[name] = replace(entry, tool=tool)
