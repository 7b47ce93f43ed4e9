"""A GraphQL schema as a catalog: its root fields become registry tools.

The catalog's source is the schema as SDL (``schema.graphql``) or an introspection answer
(JSON); a schema holds no address, so ``base_url`` is the endpoint's URL
(``https://api.example.com/graphql``, its query string kept for every call) and is
required. ``prefix`` and ``include`` (field names) apply as for OpenAPI. The tools carry no
credentials: an endpoint needing them is reached with a tool edited to name a secret, or
through a session's ``X-Target-Headers``.
"""

from __future__ import annotations

import re

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.graphql.endpoint import endpoint_parts
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.openapi.convert import ConversionOptions, ConversionResult, OperationInfo
from dynamic_tools.tools.openapi.issues import Issue

__all__ = ["convert_graphql", "looks_like_graphql"]

_KEYWORDS = frozenset(
    {"schema", "type", "extend", "interface", "enum", "input", "scalar", "union", "directive"}
)
_SCAN_LINES = 2_000


def looks_like_graphql(content: bytes) -> bool:
    """Whether ``content`` is a GraphQL schema.

    SDL text (its first definition keyword, past comments and descriptions), or an
    introspection answer (``{"data": {"__schema": …}}`` or ``{"__schema": …}``).
    """
    head = content[:65536]
    if head.lstrip().startswith(b"{"):
        return b'"__schema"' in head
    text = head.decode("utf-8", errors="replace")
    in_description = False
    for line in text.splitlines()[:_SCAN_LINES]:
        stripped = line.strip()
        if in_description:
            in_description = '"""' not in stripped
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith('"""'):
            in_description = stripped.count('"""') == 1
            continue
        if stripped.startswith('"'):
            continue  # a one-line description
        word = re.match(r"[A-Za-z_]+", stripped)
        return word is not None and word.group() in _KEYWORDS
    return False


def convert_graphql(content: bytes, options: ConversionOptions) -> ConversionResult:
    """The tools of a schema; violations when it does not parse or ``base_url`` is missing."""
    from dynamic_tools.tools.graphql.fields import root_field_tools
    from dynamic_tools.tools.graphql.schema import (
        introspection_answer,
        schema_from_introspection,
        schema_from_sdl,
    )

    text = content.decode("utf-8", errors="replace")
    try:
        if text.lstrip().startswith("{"):
            answer = introspection_answer(text, field="source")
            if isinstance(answer, dict) and "__schema" in answer:
                answer = {"data": answer}
            schema = schema_from_introspection(answer, field="source")
        else:
            schema = schema_from_sdl(text, field="source")
    except InvalidInputError as exc:
        rule = str(exc.violations[0].get("rule", "graphql")) if exc.violations else "graphql"
        return ConversionResult(kind="graphql", violations=[Issue("#", rule, exc.message)])
    if not options.base_url:
        return ConversionResult(
            kind="graphql",
            violations=[
                Issue(
                    "base_url",
                    "required",
                    "a GraphQL schema holds no address: give base_url, the endpoint's URL",
                )
            ],
        )
    try:
        endpoint_parts(options.base_url, where="base_url")
    except InvalidInputError as exc:
        issue = exc.violations[0]
        return ConversionResult(
            kind="graphql", violations=[Issue("base_url", issue["rule"], exc.message)]
        )
    tools = root_field_tools(schema, options.base_url)
    fields = {t.name for t in tools}
    violations = [
        Issue("include", "unknown_operation", f"'{name}' is not a root field of the schema")
        for name in options.include or ()
        if name not in fields
    ]
    if options.include is not None:
        tools = [t for t in tools if t.name in set(options.include)]
    if options.prefix:
        tools = [_prefixed(t, options.prefix) for t in tools]
    return ConversionResult(
        kind="graphql",
        title=options.catalog,
        base_url=options.base_url,
        operation_count=len(fields),
        tools=tools,
        operations=[OperationInfo(t.name, "POST", t.api.path, None, f"#/{t.name}") for t in tools],
        violations=violations,
    )


def _prefixed(tool: ToolConfig, prefix: str) -> ToolConfig:
    return tool.model_copy(update={"name": f"{prefix}_{tool.name}"[:64]})
