"""A GraphQL API's schema: from introspection (the endpoint answers) or from an SDL file.

Both come from outside, so both are bounded: an SDL document is parsed with a token budget and
a size limit, an introspection answer must have the shape the introspection query asks for.
Every problem is an :class:`~dynamic_tools.errors.InvalidInputError` naming where it is (line
and column for SDL). Compiled schemas are cached by the hash of their SDL, so the free-form
query tools of a session (``{prefix}_query`` / ``{prefix}_execute``) compile theirs once per
process.
"""

from __future__ import annotations

import functools
from typing import Any

from graphql import (
    GraphQLError,
    GraphQLSchema,
    build_ast_schema,
    build_client_schema,
    get_introspection_query,
    parse,
    print_schema,
)

from dynamic_tools.errors import InvalidInputError

__all__ = [
    "INTROSPECTION_QUERY",
    "MAX_SDL_CHARS",
    "compiled_schema",
    "schema_from_introspection",
    "schema_from_sdl",
    "schema_sdl",
]

INTROSPECTION_QUERY = get_introspection_query(descriptions=True)
MAX_SDL_CHARS = 8_000_000
MAX_SDL_TOKENS = 2_000_000


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
        return build_ast_schema(document)
    except GraphQLError as exc:
        raise _invalid(exc, field) from None
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(
            f"the GraphQL schema is not valid: {exc}"[:500],
            violations=[{"path": field, "rule": "graphql", "message": str(exc)[:300]}],
        ) from None


def schema_from_introspection(answer: Any, *, field: str = "introspection") -> GraphQLSchema:
    """The schema of an endpoint's answer to :data:`INTROSPECTION_QUERY`.

    Raises:
        InvalidInputError: the answer is not an introspection result (or reports errors).
    """
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
        return build_client_schema(data)  # type: ignore[arg-type]
    except (GraphQLError, TypeError, ValueError, KeyError) as exc:
        raise InvalidInputError(
            f"the introspection answer does not describe a schema: {exc}"[:500],
            violations=[{"path": field, "rule": "introspection", "message": str(exc)[:300]}],
        ) from None


def schema_sdl(schema: GraphQLSchema) -> str:
    """The schema as SDL (what tools keep and the LLM reads)."""
    return print_schema(schema)


@functools.lru_cache(maxsize=16)
def compiled_schema(sdl: str) -> GraphQLSchema:
    """The schema of ``sdl``, compiled once per process (an LRU keyed by the text)."""
    return schema_from_sdl(sdl)


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
