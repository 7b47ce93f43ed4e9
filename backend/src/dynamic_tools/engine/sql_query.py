"""The built-in ``sql_query`` tool: read-only SQL over a run's named outputs.

Each call builds a fresh in-memory SQLite database (stdlib ``sqlite3``), loads only the outputs
the query names as tables, runs one ``SELECT``/``WITH`` statement and closes the database.

A table is a list of objects, a list of lists of objects (a ``foreach`` over a search, flattened
one level in order) or one object (one row). Columns are the union of the rows' keys in
first-seen order (a missing key is NULL); nested objects and lists are stored as compact JSON
text (use ``json_extract``) and **come back as text**; booleans are 0/1; blobs come back as hex.
A table with no columns (no rows, or only empty objects) gets one column per identifier in the
query, so a query over an empty search answers ``[]`` instead of "no such column".

Refused, each as a ``SqlQueryError``: anything but exactly one ``SELECT``/``WITH`` statement;
writes, DDL, ``ATTACH``, ``PRAGMA``, ``load_extension`` and table-valued functions (an
authorizer, with ``PRAGMA query_only`` behind it); running past the time limit; more rows than
``max_rows``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from dynamic_tools.engine.references import type_name
from dynamic_tools.errors import InvalidInputError

_MAX_KEY_LENGTH = 128
_MIN_LENGTH_LIMIT = 16 * 1024 * 1024  # bytes; stops zeroblob()/printf() memory bombs
_PROGRESS_EVERY = 1000  # SQLite VM instructions between time-limit checks
# Functions that reach outside the database; most are absent from stdlib builds, denied anyway.
_DENIED_FUNCTIONS = frozenset(
    {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "fsdir"}
)
_ALLOWED_ACTIONS = frozenset(
    # SQLITE_RECURSIVE is a read too: without it no recursive CTE could run at all.
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_CLAUSE_ENDS = frozenset(
    {"WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW", "UNION", "INTERSECT", "EXCEPT"}
)
_NOT_NAMES = _CLAUSE_ENDS | {"SELECT", "VALUES", "ON", "USING", "AS"}
_TOKEN = re.compile(
    r"""(?P<space>\s+|--[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<string>'(?:[^']|'')*'?)
    |(?P<quoted>"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
    |(?P<word>[^\W\d][\w$]*)
    |(?P<number>\d[\w.]*)
    |(?P<op>.)""",
    re.S | re.X,
)

Token = tuple[str, str, int]  # kind ("word", "quoted", "string", "number", "op"), text, offset


class SqlQueryError(InvalidInputError):
    """A ``sql_query`` call was refused or failed.

    Attributes:
        sql: The query as given.
        table: The table (named output) at fault, when there is one.
        detail: The problem alone, e.g. ``exceeded the time limit of 2 s``.
    """

    code = "sql_query_failed"

    def __init__(self, detail: str, *, sql: str, table: str | None = None) -> None:
        self.sql = sql
        self.table = table
        self.detail = detail
        violation: dict[str, Any] = {"field": "sql", "message": detail}
        if table is not None:
            violation["table"] = table
        super().__init__(
            detail,
            violations=[violation],
            context={"sql": sql, "table": table},
        )


def table_names(sql: str) -> list[str]:
    """The tables ``sql`` reads: identifiers after FROM, JOIN or a comma in a FROM list.

    Case-insensitive keywords; quoted identifiers are unquoted; ``main.t`` gives ``t``. Names
    of common table expressions (``WITH x AS (...)``) and table-valued functions
    (``json_each(...)``) are left out. Each name once, in first-seen order.
    """
    tokens = _tokens(sql)
    ctes = {name.lower() for name in _cte_names(tokens)}
    found: dict[str, str] = {}
    from_depths: list[int] = []  # paren depth of each FROM clause still open
    depth, expect_table, i = 0, False, 0
    while i < len(tokens):
        kind, text, _ = tokens[i]
        word = text.upper() if kind == "word" else ""
        wanted, expect_table = expect_table, False
        if text in ("(", ")") and kind == "op":
            depth += 1 if text == "(" else -1
            while from_depths and from_depths[-1] > depth:
                from_depths.pop()
        elif wanted and (kind == "quoted" or (kind == "word" and word not in _NOT_NAMES)):
            if _text_at(tokens, i + 1) == ".":  # schema.table
                i += 2
                text = _text_at(tokens, i)
            if text and _text_at(tokens, i + 1) != "(" and text.lower() not in ctes:
                found.setdefault(text.lower(), text)
        elif word in ("FROM", "JOIN") and _text_at(tokens, i - 1).upper() != "DISTINCT":
            expect_table = True
            if word == "FROM":
                from_depths.append(depth)
        elif text == "," and kind == "op" and from_depths and from_depths[-1] == depth:
            expect_table = True
        elif word in _CLAUSE_ENDS and from_depths and from_depths[-1] == depth:
            from_depths.pop()
        i += 1
    return list(found.values())


def run_sql_query(
    sql: str, tables: Mapping[str, Any], *, time_limit_s: float = 2.0, max_rows: int = 10_000
) -> list[dict[str, Any]]:
    """Run one read-only query over ``tables`` and return its rows.

    Args:
        sql: One ``SELECT`` or ``WITH`` statement; a trailing ``;`` is allowed.
        tables: Named values (the run's params and outputs); only those ``sql`` names are loaded.
        time_limit_s: Wall-clock limit for running the query and fetching its rows.
        max_rows: The most rows the query may return; more is an error, not a silent cut.

    Returns:
        One ``{column: value}`` dict per result row, in the query's order.

    Raises:
        SqlQueryError: The query is refused, names an unknown or unloadable table, does not
            compile, runs too long or returns too many rows.
    """
    statement = _single_select(sql)
    connection = sqlite3.connect(":memory:", isolation_level=None)
    try:
        longest = _load_tables(connection, sql, tables)
        return _execute(connection, sql, statement, time_limit_s, max_rows, longest)
    finally:
        connection.close()


def _tokens(sql: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup or "op"
        text = match.group()
        if kind == "space":
            continue
        if kind == "quoted":
            closing = {"[": "]"}.get(text[0], text[0])
            text = text[1:].removesuffix(closing).replace(closing * 2, closing)
        tokens.append((kind, text, match.start()))
    return tokens


def _text_at(tokens: list[Token], i: int) -> str:
    return tokens[i][1] if 0 <= i < len(tokens) and tokens[i][0] != "string" else ""


def _cte_names(tokens: list[Token]) -> list[str]:
    names: list[str] = []
    for start, (kind, text, _) in enumerate(tokens):
        if kind == "word" and text.upper() == "WITH":
            names += _with_clause(tokens, start)[0]
    return names


def _with_clause(tokens: list[Token], start: int) -> tuple[list[str], int]:
    """The CTE names of the WITH clause at ``start`` and the index of the token after it."""
    j = start + 2 if _text_at(tokens, start + 1).upper() == "RECURSIVE" else start + 1
    names: list[str] = []
    while j < len(tokens) and tokens[j][0] in ("word", "quoted"):
        name, j = tokens[j][1], _skip_group(tokens, j + 1)
        if _text_at(tokens, j).upper() != "AS":
            break
        j += 2 if _text_at(tokens, j + 1).upper() == "NOT" else 1
        j += 1 if _text_at(tokens, j).upper() == "MATERIALIZED" else 0
        if _text_at(tokens, j) != "(":
            break
        names.append(name)
        j = _skip_group(tokens, j)
        if _text_at(tokens, j) != ",":
            break
        j += 1
    return names, j


def _skip_group(tokens: list[Token], j: int) -> int:
    """The index after the parenthesised group starting at ``j`` (``j`` if there is none)."""
    if _text_at(tokens, j) != "(":
        return j
    depth = 0
    for k in range(j, len(tokens)):
        if tokens[k][0] == "op" and tokens[k][1] in "()":
            depth += 1 if tokens[k][1] == "(" else -1
            if depth == 0:
                return k + 1
    return len(tokens)


def _single_select(sql: str) -> str:
    """``sql`` cut before its first ``;``, once it is known to be one SELECT/WITH statement."""
    tokens = _tokens(sql)
    if not tokens:
        raise SqlQueryError("the query is empty", sql=sql)
    ends = [t for t in tokens if t[0] == "op" and t[1] == ";"]
    if ends and any(t[2] > ends[0][2] and t[1] != ";" for t in tokens):
        raise SqlQueryError("exactly one statement is allowed; found more after ';'", sql=sql)
    first = tokens[0][1].upper()
    if first == "WITH":  # WITH ... may lead to INSERT, UPDATE or DELETE as well as SELECT
        first = _text_at(tokens, _with_clause(tokens, 0)[1]).upper() or "WITH"
        first = "SELECT" if first == "VALUES" else first
    if first != "SELECT":
        raise SqlQueryError(
            f"sql_query is read-only: only SELECT or WITH ... SELECT queries are allowed, "
            f"not {first}",
            sql=sql,
        )
    return sql[: ends[0][2]] if ends else sql


def _load_tables(connection: sqlite3.Connection, sql: str, tables: Mapping[str, Any]) -> int:
    """Create and fill each table ``sql`` names; returns the longest stored text (bytes)."""
    folded = {name.lower(): name for name in tables}
    longest = 0
    connection.execute("BEGIN")
    for table in table_names(sql):
        key = table if table in tables else folded.get(table.lower())
        if key is None:
            known = ", ".join(sorted(tables)) or "(none)"
            raise SqlQueryError(
                f"table '{table}' is not a named output; known: {known}", sql=sql, table=table
            )
        rows = _rows_of(tables[key], sql, table)
        columns = _columns_of(rows, sql, table)
        values = [[_cell(row.get(column)) for column in columns] for row in rows]
        longest = max([longest, *(len(str(v).encode()) for row in values for v in row)])
        try:
            quoted = ", ".join(_quote(column) for column in columns)
            connection.execute(f"CREATE TABLE {_quote(table)} ({quoted})")
            marks = ", ".join("?" * len(columns))
            connection.executemany(f"INSERT INTO {_quote(table)} VALUES ({marks})", values)
        except sqlite3.Error as exc:  # e.g. keys differing only in case, too many columns
            raise SqlQueryError(
                f"table '{table}' could not be loaded: {exc}", sql=sql, table=table
            ) from exc
    connection.execute("COMMIT")
    return longest


def _rows_of(value: Any, sql: str, table: str) -> list[dict[str, Any]]:
    """The rows a table value stands for (see the module docstring), keys as text."""
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list | tuple):
        raise _not_rows(table, _a(type_name(value)), sql)
    rows: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        nested = isinstance(item, list | tuple)
        for entry in item if nested else [item]:
            if not isinstance(entry, dict):
                kinds = {type_name(v) for v in items}
                what = f"a list whose item {index} is {_a(type_name(item))}"
                if nested:
                    what = f"a list whose item {index} holds {_a(type_name(entry))}"
                elif len(kinds) == 1:
                    what = f"a list of {kinds.pop()}s"
                raise _not_rows(table, what, sql)
            rows.append({str(key): cell for key, cell in entry.items()})
    return rows


def _not_rows(table: str, what: str, sql: str) -> SqlQueryError:
    expected = "a list of objects, a list of lists of objects or one object"
    return SqlQueryError(f"table '{table}' is {what}; expected {expected}", sql=sql, table=table)


def _a(kind: str) -> str:
    return kind if kind == "null" else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _columns_of(rows: list[dict[str, Any]], sql: str, table: str) -> list[str]:
    """The union of the rows' keys in first-seen order, checked to be usable column names."""
    columns: dict[str, str] = {}  # insertion-ordered set
    for row in rows:
        for name in row:
            if not name or len(name) > _MAX_KEY_LENGTH or "\x00" in name:
                raise SqlQueryError(
                    f"table '{table}' has a key unusable as a column ({name[:40]!r}): keys must "
                    f"be 1 to {_MAX_KEY_LENGTH} characters",
                    sql=sql,
                    table=table,
                )
            columns.setdefault(name, name)
    if not columns:  # nothing to learn the shape from: offer every name the query uses
        for kind, word, _ in _tokens(sql):
            if kind in ("word", "quoted") and 0 < len(word) <= _MAX_KEY_LENGTH:
                columns.setdefault(word.lower(), word)  # SQLite folds column case
    return list(columns.values())


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return str(value)  # SQLite integers are 64-bit
    if value is None or isinstance(value, int | float | str | bytes):
        return value
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _execute(
    connection: sqlite3.Connection,
    sql: str,
    statement: str,
    time_limit_s: float,
    max_rows: int,
    longest: int,
) -> list[dict[str, Any]]:
    connection.execute("PRAGMA query_only = ON")
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(_MIN_LENGTH_LIMIT, 4 * longest))
    denied: list[str] = []

    def authorize(action: int, arg1: str | None, arg2: str | None, *_: str | None) -> int:
        what = _denial(action, arg1, arg2)
        if what is None:
            return sqlite3.SQLITE_OK
        denied.append(what)
        return sqlite3.SQLITE_DENY

    deadline = time.monotonic() + time_limit_s
    timed_out: list[bool] = []

    def progress() -> int:
        if time.monotonic() > deadline:
            timed_out.append(True)
            return 1
        return 0

    connection.set_authorizer(authorize)
    connection.set_progress_handler(progress, _PROGRESS_EVERY)
    try:
        cursor = connection.execute(statement)
        fetched = cursor.fetchmany(max_rows + 1)
    except sqlite3.Error as exc:
        if timed_out:
            detail = f"the query exceeded the time limit of {time_limit_s:g} s"
        elif denied:
            detail = denied[0]
        else:
            detail = f"SQLite refused the query: {exc}"
        raise SqlQueryError(detail, sql=sql) from exc
    if len(fetched) > max_rows:
        raise SqlQueryError(
            f"the query returned more than {max_rows} rows (the limit); add a LIMIT", sql=sql
        )
    names = [column[0] for column in cursor.description or ()]
    return [
        {name: v.hex() if isinstance(v, bytes) else v for name, v in zip(names, row, strict=True)}
        for row in fetched
    ]


def _denial(action: int, arg1: str | None, arg2: str | None) -> str | None:
    """Why ``action`` is refused, or None when it is allowed."""
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return f"the function {arg2}() is not allowed"
    if action in _ALLOWED_ACTIONS:
        return None
    what = _ACTION_NAMES.get(action, "changing the schema")
    if (arg1 or "").lower() in ("sqlite_master", "sqlite_temp_master"):
        if action == sqlite3.SQLITE_UPDATE:
            # SQLite's own bookkeeping when a table-valued function (json_each, ...) is used.
            return "table-valued functions (json_each, json_tree, pragma_*) are not supported"
        what = "changing the schema"
    return f"sql_query is read-only: {what} is not allowed"


_ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{name}"): name
    for name in ("INSERT", "UPDATE", "DELETE", "ATTACH", "DETACH", "PRAGMA", "TRANSACTION")
}


__all__ = [
    "SqlQueryError",
    "Token",
    "run_sql_query",
    "table_names",
]
