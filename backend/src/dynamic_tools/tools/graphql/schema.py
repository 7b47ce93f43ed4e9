"""A GraphQL API's schema: from introspection (the endpoint answers) or from an SDL file.

Both come from outside, so both are bounded before graphql-core (whose schema builders recurse)
reads them: an SDL document is parsed with a token budget and a size limit (graphql-core's parser
refuses nesting past its own limit), an introspection answer must be JSON nested at most
:data:`MAX_INTROSPECTION_DEPTH` levels with the shape the introspection query asks for, and no
type reference of either may wrap its type (lists, non-null) more than :data:`MAX_TYPE_DEPTH`
times. Every problem is an :class:`~dynamic_tools.errors.InvalidInputError` naming where it is
(line and column for SDL, the field for a type reference). Compiled schemas are cached by the
hash of their SDL, so the free-form query tools of a session (``{prefix}_query`` /
``{prefix}_execute``) compile theirs once per process.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from graphql import (
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLType,
    build_ast_schema,
    build_client_schema,
    get_introspection_query,
    parse,
    print_schema,
)

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.safe_parsing import TooDeep, find_too_deep, loads_json, shorten

__all__ = [
    "INTROSPECTION_QUERY",
    "MAX_INTROSPECTION_DEPTH",
    "MAX_SDL_CHARS",
    "MAX_TYPE_DEPTH",
    "compiled_schema",
    "introspection_answer",
    "schema_from_introspection",
    "schema_from_sdl",
    "schema_sdl",
]

INTROSPECTION_QUERY = get_introspection_query(descriptions=True)
MAX_SDL_CHARS = 8_000_000
MAX_SDL_TOKENS = 2_000_000
#: JSON levels of an introspection answer: the answer to :data:`INTROSPECTION_QUERY` nests
#: about 20 deep; the same limit as the HTTP sender's for a response kept as JSON
MAX_INTROSPECTION_DEPTH = 100
#: how many times a type reference may wrap its type (``[[Int!]!]!`` is 5); the introspection
#: query itself asks for 9 levels of ``ofType``
MAX_TYPE_DEPTH = 16


def schema_from_sdl(text: str, *, field: str = "schema") -> GraphQLSchema:
    """The schema an SDL document describes.

    Raises:
        InvalidInputError: the document is too large, does not parse or is not a valid schema
            (the violation gives line and column where GraphQL does).
    """
    if len(text) > MAX_SDL_CHARS:
        raise InvalidInputError(
            f"the GraphQL schema is longer than {MAX_SDL_CHARS} characters",
            violations=[{"path": field, "rule": "size", "message": "too long"}],
        )
    try:
        document = parse(text, max_tokens=MAX_SDL_TOKENS, no_location=False)
        schema = build_ast_schema(document)
    except GraphQLError as exc:
        raise _invalid(exc, field) from None
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(
            f"the GraphQL schema is not valid: {exc}"[:500],
            violations=[{"path": field, "rule": "graphql", "message": str(exc)[:300]}],
        ) from None
    _check_type_depth(schema, field, "the GraphQL schema")
    return schema


def introspection_answer(text: str | bytes, *, field: str = "introspection") -> Any:
    """An introspection answer read from JSON text, nested at most :data:`MAX_INTROSPECTION_DEPTH`.

    Raises:
        InvalidInputError: the text is not JSON, or nests too deep.
    """
    try:
        return loads_json(text, MAX_INTROSPECTION_DEPTH)
    except TooDeep as exc:
        raise _too_deep(field, "the introspection answer", exc.limit, exc.path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        message = f"the introspection answer is not JSON ({exc})"[:300]
        raise InvalidInputError(
            message, violations=[{"path": field, "rule": "introspection", "message": message}]
        ) from None


def schema_from_introspection(answer: Any, *, field: str = "introspection") -> GraphQLSchema:
    """The schema of an endpoint's answer to :data:`INTROSPECTION_QUERY`.

    Raises:
        InvalidInputError: the answer is not an introspection result (or reports errors), nests
            past :data:`MAX_INTROSPECTION_DEPTH` levels, or wraps a type past
            :data:`MAX_TYPE_DEPTH`.
    """
    deep = find_too_deep(answer, MAX_INTROSPECTION_DEPTH)
    if deep is not None:  # build_client_schema recurses along ofType chains
        raise _too_deep(field, "the introspection answer", MAX_INTROSPECTION_DEPTH, deep)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("__schema"), dict):
        errors = answer.get("errors") if isinstance(answer, dict) else None
        reason = (
            "the endpoint answered errors: " + _messages(errors)
            if errors
            else "the answer has no data.__schema (is this a GraphQL endpoint with "
            "introspection enabled?)"
        )
        raise InvalidInputError(
            f"the GraphQL schema could not be read by introspection: {reason}",
            violations=[{"path": field, "rule": "introspection", "message": reason}],
        )
    try:
        schema = build_client_schema(data)  # type: ignore[arg-type]
    except (  # what graphql-core raises on a malformed answer, whichever part is wrong
        GraphQLError,
        TypeError,
        ValueError,
        KeyError,
        AttributeError,
        IndexError,
        RecursionError,
    ) as exc:
        raise InvalidInputError(
            f"the introspection answer does not describe a schema: {exc}"[:500],
            violations=[{"path": field, "rule": "introspection", "message": str(exc)[:300]}],
        ) from None
    _check_type_depth(schema, field, "the introspection answer")
    return schema


def schema_sdl(schema: GraphQLSchema) -> str:
    """The schema as SDL (what tools keep and the LLM reads)."""
    return print_schema(schema)


@functools.lru_cache(maxsize=16)
def compiled_schema(sdl: str) -> GraphQLSchema:
    """The schema of ``sdl``, compiled once per process (an LRU keyed by the text)."""
    return schema_from_sdl(sdl)


def _check_type_depth(schema: GraphQLSchema, field: str, what: str) -> None:
    """Refuse a type reference wrapped more than :data:`MAX_TYPE_DEPTH` times.

    Tools turn argument types into JSON Schemas level by level, so a reference such as
    ``[[[…String…]]]`` 200 deep would nest a parameter's schema 200 deep.
    """
    for where, kind in _type_references(schema):
        depth = 0
        while isinstance(kind, GraphQLList | GraphQLNonNull):
            depth += 1
            if depth > MAX_TYPE_DEPTH:
                message = (
                    f"{what}'s type references nest past {MAX_TYPE_DEPTH} levels "
                    f"(lists and non-null wrappers, at {where})"
                )
                raise InvalidInputError(
                    message, violations=[{"path": field, "rule": "depth", "message": message}]
                )
            kind = kind.of_type


def _type_references(schema: GraphQLSchema) -> Iterator[tuple[str, GraphQLType]]:
    """Every type reference of the schema: fields, their arguments, input fields, directives."""
    for name, named in schema.type_map.items():
        if isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
            for field_name, found in named.fields.items():
                yield f"{name}.{field_name}", found.type
                for arg_name, arg in found.args.items():
                    yield f"{name}.{field_name}({arg_name}:)", arg.type
        elif isinstance(named, GraphQLInputObjectType):
            for field_name, input_field in named.fields.items():
                yield f"{name}.{field_name}", input_field.type
    for directive in schema.directives:
        for arg_name, arg in directive.args.items():
            yield f"@{directive.name}({arg_name}:)", arg.type


def _too_deep(
    field: str, what: str, limit: int, path: tuple[str | int, ...] = ()
) -> InvalidInputError:
    at = f" (at {shorten('.'.join(str(p) for p in path))})" if path else ""
    message = f"{what} is nested past {limit} levels{at}"
    return InvalidInputError(
        message, violations=[{"path": field, "rule": "depth", "message": message}]
    )


def _messages(errors: Any) -> str:
    if not isinstance(errors, list):
        return str(errors)[:300]
    return "; ".join(str(e.get("message") if isinstance(e, dict) else e)[:200] for e in errors[:3])


def _invalid(exc: GraphQLError, field: str) -> InvalidInputError:
    location = exc.locations[0] if exc.locations else None
    violation: dict[str, Any] = {"path": field, "rule": "graphql", "message": exc.message}
    where = ""
    if location is not None:
        violation.update(line=location.line, column=location.column)
        where = f" (line {location.line}, column {location.column})"
    return InvalidInputError(
        f"the GraphQL schema is not valid: {exc.message}{where}", violations=[violation]
    )
