"""A GraphQL API as tools: its root fields, and the free-form query tools of a session.

Every field of the ``Query`` type becomes a read-only tool and every field of ``Mutation`` a
tool that changes things; the tool's parameters are the field's arguments as JSON Schema (the
GraphQL input types translated, non-null ones required), and its operation is a fixed document
selecting the field's scalar leaves, and those of its object fields one level down. The free
tools (``{prefix}_query`` picks and writes a query, ``{prefix}_execute`` sends a given one) keep
the schema's SDL, so a query is validated before it is sent.

The endpoint's query string (``/graphql?tenant=acme``) is part of the endpoint: it becomes the
tools' static query parameters, sent with every call next to any other query parameter.
"""

from __future__ import annotations

import re
from typing import Any

from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    Undefined,
    get_named_type,
)

from dynamic_tools.tools.graphql.endpoint import Endpoint, endpoint_parts, free_query_tool
from dynamic_tools.tools.models import ToolConfig

__all__ = ["Endpoint", "endpoint_parts", "free_query_tool", "root_field_tools"]

MAX_INPUT_DEPTH = 4
MAX_DESCRIPTION = 1_000
_SCALARS = {
    "String": {"type": "string"},
    "ID": {"type": "string"},
    "Int": {"type": "integer"},
    "Float": {"type": "number"},
    "Boolean": {"type": "boolean"},
}


def root_field_tools(schema: GraphQLSchema, endpoint: str) -> list[ToolConfig]:
    """One tool per root field of ``Query`` and ``Mutation`` (mutations named apart on a clash)."""
    target = endpoint_parts(endpoint)
    tools: list[ToolConfig] = []
    names: set[str] = set()
    for kind, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        if root is None:
            continue
        for field_name, field in root.fields.items():
            name = field_name if field_name not in names else f"{kind}_{field_name}"
            names.add(name)
            tools.append(_field_tool(name, kind, field_name, field, target))
    return tools


def _field_tool(
    name: str, kind: str, field_name: str, field: GraphQLField, target: Endpoint
) -> ToolConfig:
    parameters: dict[str, Any] = {}
    declared = []
    for arg_name, arg in field.args.items():
        parameters[arg_name] = {
            "in": "body",
            "required": _required(arg),
            **_input_schema(arg.type, 0, frozenset()),
            **({"description": arg.description[:MAX_DESCRIPTION]} if arg.description else {}),
        }
        declared.append(f"${arg_name}: {arg.type}")
    variables = f"({', '.join(declared)})" if declared else ""
    passed = f"({', '.join(f'{a}: ${a}' for a in field.args)})" if field.args else ""
    selection = _selection(field.type, 0)
    operation = (
        f"{kind} {_operation_name(field_name)}{variables} {{ {field_name}{passed}{selection} }}"
    )
    description = (field.description or f"The {kind} field {field_name}")[:MAX_DESCRIPTION]
    read_only = kind == "query"
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": description,
            "api": {"method": "POST", "base_url": target.base_url, "path": target.path},
            "static_params": {"query": target.query},
            "parameters": parameters,
            "graphql": {"document": operation},
            "annotations": {
                "read_only": read_only,
                "destructive": not read_only,
                "idempotent": read_only,
            },
        }
    )


def _required(arg: GraphQLArgument) -> bool:
    return isinstance(arg.type, GraphQLNonNull) and arg.default_value is Undefined


def _operation_name(field_name: str) -> str:
    return re.sub(r"(^|_)([a-z])", lambda m: m.group(2).upper(), field_name) or "Operation"


def _input_schema(kind: Any, depth: int, seen: frozenset[str]) -> dict[str, Any]:
    """The JSON Schema of a GraphQL input type (nullable unless non-null; bounded depth)."""
    if isinstance(kind, GraphQLNonNull):
        return _input_schema(kind.of_type, depth, seen)
    if isinstance(kind, GraphQLList):
        return {"type": "array", "items": _input_schema(kind.of_type, depth + 1, seen)}
    if isinstance(kind, GraphQLEnumType):
        return {"type": "string", "enum": list(kind.values)}
    if isinstance(kind, GraphQLScalarType):
        return dict(_SCALARS.get(kind.name, {}))  # a custom scalar: any JSON value
    if isinstance(kind, GraphQLInputObjectType):
        if depth >= MAX_INPUT_DEPTH or kind.name in seen:
            return {"type": "object"}
        inner = seen | {kind.name}
        properties = {n: _input_schema(f.type, depth + 1, inner) for n, f in kind.fields.items()}
        required = [n for n, f in kind.fields.items() if isinstance(f.type, GraphQLNonNull)]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return schema
    return {}


def _selection(kind: Any, depth: int) -> str:
    """The selection set of an output type: scalar leaves, object fields one level down."""
    named: GraphQLNamedType = get_named_type(kind)
    if isinstance(named, GraphQLScalarType | GraphQLEnumType):
        return ""
    if isinstance(named, GraphQLUnionType):
        return " { __typename }"
    assert isinstance(named, GraphQLObjectType | GraphQLInterfaceType)
    leaves = []
    for name, field in named.fields.items():
        if any(isinstance(a.type, GraphQLNonNull) for a in field.args.values()):
            continue  # needs arguments we do not have
        inner = get_named_type(field.type)
        if isinstance(inner, GraphQLScalarType | GraphQLEnumType):
            leaves.append(name)
        elif depth == 0 and isinstance(inner, GraphQLObjectType | GraphQLInterfaceType):
            nested = _selection(field.type, depth + 1)
            if nested.strip() not in ("", "{ __typename }"):
                leaves.append(name + nested)
    return " { " + " ".join(leaves or ["__typename"]) + " }"
