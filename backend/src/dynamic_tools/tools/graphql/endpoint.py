"""A GraphQL endpoint's URL in the parts a tool keeps, and the free-form query tool of a session.

Nothing here reads a schema, so graphql-core is not imported: a server whose registry has
GraphQL tools but has not yet checked an operation or read a schema does not load it
(docs/performance.md, "Memory: idle and at 1,000 tools"). The schema's root fields as tools
are in ``fields.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.credentials import looks_like_credential
from dynamic_tools.tools.models import ToolConfig

__all__ = ["Endpoint", "endpoint_parts", "free_query_tool"]


@dataclass(frozen=True)
class Endpoint:
    """A GraphQL endpoint's URL in the parts a tool keeps: origin, path and query parameters."""

    base_url: str
    path: str
    query: dict[str, str]


def endpoint_parts(url: str, *, where: str = "endpoint") -> Endpoint:
    """``https://host/graphql?tenant=acme`` → (``https://host``, ``/graphql``, ``{tenant: acme}``).

    A fragment is dropped (it is never sent).

    Raises:
        InvalidInputError: the query string names a parameter twice, or a parameter that looks
            like a credential (a credential goes in a header or a tool's ``auth``, never in a
            stored URL); the violation's path is ``where``.
    """
    parts = urlsplit(url)
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in query:
            raise _endpoint_refused(
                where,
                "query_string",
                f"the endpoint URL's query string names '{name}' twice; name each parameter once",
            )
        if looks_like_credential(name):
            raise _endpoint_refused(
                where,
                "credential",
                f"the endpoint URL's query parameter '{name}' looks like a credential, which is "
                "never kept in a URL: send it as a header (X-Target-Headers in a session, a "
                "tool's auth in a catalog)",
            )
        query[name] = value
    return Endpoint(f"{parts.scheme}://{parts.netloc}", parts.path or "/", query)


def _endpoint_refused(where: str, rule: str, message: str) -> InvalidInputError:
    return InvalidInputError(
        message, violations=[{"path": where, "rule": rule, "message": message}]
    )


def free_query_tool(
    name: str,
    endpoint: str,
    sdl: str,
    *,
    description: str,
    allow_mutations: list[str],
) -> ToolConfig:
    """A tool taking ``query``, ``variables`` and ``operationName``.

    The query is checked against the schema ``sdl`` before it is sent.
    """
    target = endpoint_parts(endpoint)
    read_only = not allow_mutations
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": description,
            "api": {"method": "POST", "base_url": target.base_url, "path": target.path},
            "static_params": {"query": target.query},
            "parameters": {
                "query": {
                    "in": "body",
                    "required": True,
                    "type": "string",
                    "minLength": 1,
                    "description": "A GraphQL operation valid for the API's schema"
                    + (" (a query: mutations are refused)" if read_only else ""),
                },
                "variables": {
                    "in": "body",
                    "type": "object",
                    "description": "Values of the operation's variables",
                },
                "operationName": {
                    "in": "body",
                    "type": "string",
                    "description": "Which operation of the document to run (when it has several)",
                },
            },
            "graphql": {"schema_sdl": sdl, "allow_mutations": allow_mutations},
            "annotations": {"read_only": read_only, "destructive": not read_only},
        }
    )
