"""SQL over an API's answer: filter, rank, join or aggregate what the API cannot.

The answer's rows become the table ``result``: the body when it is a list; otherwise, once
envelopes of one key are opened, the first list found inside it, depth first (a GraphQL
answer's ``data.flights``, a REST envelope's ``items``); otherwise the object itself as one
row (``data.flightStatus``). One ``SELECT``/``WITH`` runs over it in the
engine's ``sql_query`` sandbox (in-memory SQLite, read-only, time and row limits). An answer
that is an error (an HTTP error status, GraphQL errors) is not queried.
"""

from __future__ import annotations

from typing import Any

from dynamic_tools.engine.sql_query import run_sql_query
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.selection.models import SqlApplied, WorkflowResponse

__all__ = ["apply_sql", "rows_of"]

TABLE = "result"
MAX_SEARCH_DEPTH = 6


def rows_of(body: Any) -> Any:
    """The table of an answer: a list, the first list inside it, or the object as one row.

    Envelopes of one key are opened first: ``{"data": {"flightStatus": {...}}}`` is the
    status's row.
    """
    for _ in range(MAX_SEARCH_DEPTH):
        if not (isinstance(body, dict) and len(body) == 1):
            break
        (inner,) = body.values()
        if not isinstance(inner, dict | list):
            break
        body = inner
    if isinstance(body, list):
        return body
    found = _first_list(body, 0)
    return found if found is not None else body


def _first_list(value: Any, depth: int) -> list[Any] | None:
    if not isinstance(value, dict) or depth > MAX_SEARCH_DEPTH:
        return None
    for inner in value.values():
        if isinstance(inner, list):
            return inner
    for inner in value.values():
        found = _first_list(inner, depth + 1)
        if found is not None:
            return found
    return None


def apply_sql(sql: str, response: WorkflowResponse) -> None:
    """Run ``sql`` over ``response``'s answer and record it in ``response.sql``.

    Raises:
        InvalidInputError: the answer is an error, or the query is refused or fails
            (:class:`~dynamic_tools.engine.sql_query.SqlQueryError`, naming the problem).
    """
    raw = response.raw_response or {}
    status = raw.get("status_code")
    if not isinstance(status, int) or status >= 400 or raw.get("graphql_errors"):
        raise InvalidInputError(
            "the API answered an error, so the SQL was not run",
            violations=[{"path": "sql", "rule": "answer", "message": "the answer is an error"}],
        )
    table = rows_of(raw.get("body"))
    rows = run_sql_query(sql, {TABLE: table})
    size = len(table) if isinstance(table, list) else 1
    response.sql = SqlApplied(query=sql, table_rows=size, rows=rows)
