"""GraphQL APIs: schemas (introspection or SDL), operations checked before sending, tools."""

from dynamic_tools.tools.graphql.fields import (
    Endpoint,
    endpoint_parts,
    free_query_tool,
    root_field_tools,
)
from dynamic_tools.tools.graphql.operations import CheckedOperation, check_operation
from dynamic_tools.tools.graphql.schema import (
    INTROSPECTION_QUERY,
    compiled_schema,
    introspection_answer,
    schema_from_introspection,
    schema_from_sdl,
    schema_sdl,
)

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
