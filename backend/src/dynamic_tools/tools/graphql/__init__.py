"""GraphQL APIs: schemas (introspection or SDL), operations checked before sending, tools.

The names below load their module on first use (PEP 562): importing this package does not
import graphql-core, which only reading a schema or checking an operation needs
(docs/performance.md, "Memory: idle and at 1,000 tools").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynamic_tools.tools.graphql.endpoint import Endpoint, endpoint_parts, free_query_tool
    from dynamic_tools.tools.graphql.fields import root_field_tools
    from dynamic_tools.tools.graphql.operations import CheckedOperation, check_operation
    from dynamic_tools.tools.graphql.schema import (
        INTROSPECTION_QUERY,
        compiled_schema,
        introspection_answer,
        schema_from_introspection,
        schema_from_sdl,
        schema_sdl,
    )

_HOMES = {
    "Endpoint": "endpoint",
    "endpoint_parts": "endpoint",
    "free_query_tool": "endpoint",
    "root_field_tools": "fields",
    "CheckedOperation": "operations",
    "check_operation": "operations",
    "INTROSPECTION_QUERY": "schema",
    "compiled_schema": "schema",
    "introspection_answer": "schema",
    "schema_from_introspection": "schema",
    "schema_from_sdl": "schema",
    "schema_sdl": "schema",
}

__all__ = [
    "INTROSPECTION_QUERY",
    "CheckedOperation",
    "Endpoint",
    "check_operation",
    "compiled_schema",
    "endpoint_parts",
    "free_query_tool",
    "introspection_answer",
    "root_field_tools",
    "schema_from_introspection",
    "schema_from_sdl",
    "schema_sdl",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
