"""The built-in ``sql_query`` tool: loading outputs as tables, read-only SQL, limits, refusals."""

from __future__ import annotations

import time
from typing import Any

import pytest

from dynamic_tools.engine import sql_query
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.models import CallNode
from dynamic_tools.engine.sql_query import SqlQueryError, run_sql_query, table_names
from dynamic_tools.errors import DynamicToolsError, InvalidInputError
from tests.conftest import EXAMPLES

TRAVEL = EXAMPLES / "workflows" / "travel.yaml"
PRICES = {  # date -> prices of that day's flights, as a search would return them
    "2026-12-01": [180.0, 95.5, 120.0],
    "2026-12-02": [88.0, 210.0],
    "2026-12-03": [],
    "2026-12-04": [99.0, 130.0, 75.25, 101.0],
}


def day_results() -> list[list[dict[str, Any]]]:
    """``all_results`` as the foreach of ``find_cheapest_across_dates`` collects it."""
    return [
        [
            {"id": f"FL-AMSBCN-{date.replace('-', '')}-{i}", "date": date, "price": price}
            for i, price in enumerate(prices, start=1)
        ]
        for date, prices in PRICES.items()
    ]


def travel_sql() -> str:
    """The query of ``find_cheapest_across_dates`` as the shipped example writes it."""
    document = load_document(TRAVEL.read_text(), name=TRAVEL.name).document
    node = document.workflows["find_cheapest_across_dates"].graph["find_cheapest"]
    assert isinstance(node, CallNode)
    assert node.call == "sql_query"
    return str(node.args["sql"])


def refusal(sql: str, tables: dict[str, Any] | None = None, **limits: Any) -> SqlQueryError:
    with pytest.raises(SqlQueryError) as caught:
        run_sql_query(sql, tables or {}, **limits)
    return caught.value


# --- the travel example -------------------------------------------------------------------


def test_travel_example_gives_the_five_cheapest_flights_across_dates_in_order() -> None:
    rows = run_sql_query(
        travel_sql(),
        {"all_results": day_results(), "origin": "AMS", "destination": "BCN", "num_days": 4},
    )
    assert rows == [
        {"id": "FL-AMSBCN-20261204-3", "date": "2026-12-04", "price": 75.25},
        {"id": "FL-AMSBCN-20261202-1", "date": "2026-12-02", "price": 88.0},
        {"id": "FL-AMSBCN-20261201-2", "date": "2026-12-01", "price": 95.5},
        {"id": "FL-AMSBCN-20261204-1", "date": "2026-12-04", "price": 99.0},
        {"id": "FL-AMSBCN-20261204-4", "date": "2026-12-04", "price": 101.0},
    ]


def test_a_list_of_lists_is_flattened_one_level_in_order() -> None:
    rows = run_sql_query("SELECT id FROM all_results", {"all_results": day_results()})
    assert [row["id"] for row in rows] == [
        "FL-AMSBCN-20261201-1",
        "FL-AMSBCN-20261201-2",
        "FL-AMSBCN-20261201-3",
        "FL-AMSBCN-20261202-1",
        "FL-AMSBCN-20261202-2",
        "FL-AMSBCN-20261204-1",
        "FL-AMSBCN-20261204-2",
        "FL-AMSBCN-20261204-3",
        "FL-AMSBCN-20261204-4",
    ]


def test_searches_that_found_nothing_give_no_rows_not_an_error() -> None:
    assert run_sql_query(travel_sql(), {"all_results": [[], []]}) == []
    assert run_sql_query("SELECT price FROM flights ORDER BY price", {"flights": []}) == []


# --- table shapes -----------------------------------------------------------------------------


def test_a_single_object_is_one_row() -> None:
    availability = {"flight_id": "FL-1", "seats_available": 4, "available": True}
    rows = run_sql_query(
        "SELECT flight_id, seats_available * 2 AS doubled, available FROM availability",
        {"availability": availability},
    )
    assert rows == [{"flight_id": "FL-1", "doubled": 8, "available": 1}]


def test_heterogeneous_rows_get_the_union_of_keys_in_first_seen_order() -> None:
    rows = run_sql_query(
        "SELECT * FROM mixed",
        {"mixed": [{"id": 1, "price": 10}, {"id": 2, "seats": 3}, {"note": "x", "id": 3}]},
    )
    assert rows == [
        {"id": 1, "price": 10, "seats": None, "note": None},
        {"id": 2, "price": None, "seats": 3, "note": None},
        {"id": 3, "price": None, "seats": None, "note": "x"},
    ]


def test_nested_values_are_stored_and_returned_as_compact_json_text() -> None:
    flights = [
        {"id": "FL-1", "segments": [{"carrier": "KL", "stops": 0}], "fare": {"eur": 95.5}},
        {"id": "FL-2", "segments": [], "fare": None, "refundable": False},
    ]
    rows = run_sql_query(
        "SELECT id, segments, fare, json_extract(segments, '$[0].carrier') AS carrier, "
        "json_extract(fare, '$.eur') AS eur, refundable FROM flights ORDER BY id",
        {"flights": flights},
    )
    assert rows == [
        {
            "id": "FL-1",
            "segments": '[{"carrier":"KL","stops":0}]',
            "fare": '{"eur":95.5}',
            "carrier": "KL",
            "eur": 95.5,
            "refundable": None,
        },
        {
            "id": "FL-2",
            "segments": "[]",
            "fare": None,
            "carrier": None,
            "eur": None,
            "refundable": 0,
        },
    ]


def test_keys_with_quotes_are_columns_not_sql() -> None:
    nasty = 'x"); DROP TABLE t; --'
    rows = run_sql_query(
        'SELECT "it\'s", "say ""hi""" FROM t',
        {"t": [{"it's": 1, 'say "hi"': 2, nasty: 3}]},
    )
    assert rows == [{"it's": 1, 'say "hi"': 2}]
    assert run_sql_query("SELECT * FROM t", {"t": [{nasty: 3}]}) == [{nasty: 3}]


def test_only_the_tables_the_query_names_are_loaded() -> None:
    # "origin" is a string param and would be refused if it were loaded.
    rows = run_sql_query("SELECT count(*) AS n FROM f", {"f": [{"a": 1}], "origin": "AMS"})
    assert rows == [{"n": 1}]


def test_big_integers_and_unicode_survive() -> None:
    rows = run_sql_query("SELECT * FROM t", {"t": [{"n": 2**70, "city": "Zürich"}]})
    assert rows == [{"n": str(2**70), "city": "Zürich"}]


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (["AMS", "BCN"], "a list of strings"),
        (42, "a number"),
        (None, "null"),
        ("AMS", "a string"),
        ([{"id": 1}, "x"], "a list whose item 1 is a string"),
        ([[{"id": 1}], [2]], "a list whose item 1 holds a number"),
        ([[["deep"]]], "a list whose item 0 holds a list"),
    ],
)
def test_a_value_that_is_not_rows_is_refused_with_what_it_is(value: Any, what: str) -> None:
    error = refusal("SELECT * FROM t", {"t": value})
    assert error.table == "t"
    assert error.detail.startswith(f"table 't' is {what}; expected a list of objects")


@pytest.mark.parametrize("key", ["", "k" * 129])
def test_keys_that_cannot_be_columns_are_refused(key: str) -> None:
    error = refusal("SELECT * FROM t", {"t": [{"id": 1, key: 2}]})
    assert error.table == "t"
    assert "1 to 128 characters" in error.detail


def test_a_128_character_key_is_fine() -> None:
    key = "k" * 128
    assert run_sql_query("SELECT * FROM t", {"t": [{key: 1}]}) == [{key: 1}]


def test_keys_differing_only_in_case_are_refused() -> None:
    error = refusal("SELECT * FROM t", {"t": [{"price": 1}, {"Price": 2}]})
    assert error.table == "t"
    assert "duplicate column name" in error.detail


def test_an_unknown_table_names_the_known_outputs() -> None:
    error = refusal("SELECT * FROM flights", {"all_results": [], "cheapest": []})
    assert error.table == "flights"
    assert error.detail == "table 'flights' is not a named output; known: all_results, cheapest"


# --- refusals: read-only, one statement -------------------------------------------------------

TABLES = {"t": [{"id": 1, "price": 10}]}


@pytest.mark.parametrize(
    ("sql", "verb"),
    [
        ("INSERT INTO t VALUES (2, 20)", "INSERT"),
        ("UPDATE t SET price = 0", "UPDATE"),
        ("DELETE FROM t", "DELETE"),
        ("DROP TABLE t", "DROP"),
        ("CREATE TABLE u (x)", "CREATE"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH"),
        ("PRAGMA writable_schema = ON", "PRAGMA"),
        ("  replace INTO t VALUES (1, 1)", "REPLACE"),
        ("WITH x AS (SELECT 1) INSERT INTO t SELECT 3, 30 FROM x", "INSERT"),
        ("WITH x AS (SELECT id FROM t) DELETE FROM t WHERE id IN x", "DELETE"),
        ("WITH RECURSIVE x(n) AS (SELECT 1) UPDATE t SET price = 1", "UPDATE"),
    ],
)
def test_anything_but_a_select_is_refused_as_read_only(sql: str, verb: str) -> None:
    error = refusal(sql, TABLES)
    assert error.detail == (
        f"sql_query is read-only: only SELECT or WITH ... SELECT queries are allowed, not {verb}"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; DROP TABLE t",
        "SELECT * FROM t; SELECT * FROM t",
        "SELECT 1 /* ; */; -- x\n PRAGMA query_only = OFF",
    ],
)
def test_a_second_statement_is_refused(sql: str) -> None:
    assert refusal(sql, TABLES).detail == "exactly one statement is allowed; found more after ';'"


def test_a_trailing_semicolon_and_comments_are_fine() -> None:
    sql = "SELECT id FROM t -- the only table\n;; /* done */"
    assert run_sql_query(sql, TABLES) == [{"id": 1}]
    assert run_sql_query("SELECT ';' AS s, \"x;y\" FROM t", {"t": [{"x;y": 5}]}) == [
        {"s": ";", "x;y": 5}
    ]


@pytest.mark.parametrize(
    ("sql", "detail"),
    [
        ("SELECT load_extension('/tmp/evil.so')", "the function load_extension() is not allowed"),
        ("SELECT LOAD_EXTENSION('x', 'init')", "the function load_extension() is not allowed"),
        ("SELECT fts3_tokenizer('simple')", "the function fts3_tokenizer() is not allowed"),
        (
            "SELECT * FROM pragma_table_info('t')",
            "table-valued functions (json_each, json_tree, pragma_*) are not supported",
        ),
        (
            "SELECT * FROM t, json_each('[1, 2]')",
            "table-valued functions (json_each, json_tree, pragma_*) are not supported",
        ),
    ],
)
def test_the_authorizer_denies_risky_functions(sql: str, detail: str) -> None:
    assert refusal(sql, TABLES).detail == detail


@pytest.mark.parametrize(
    ("sql", "detail"),
    [
        ("INSERT INTO t VALUES (2, 20)", "sql_query is read-only: INSERT is not allowed"),
        ("UPDATE t SET price = 0", "sql_query is read-only: UPDATE is not allowed"),
        ("DELETE FROM t", "sql_query is read-only: DELETE is not allowed"),
        ("DROP TABLE t", "sql_query is read-only: changing the schema is not allowed"),
        ("CREATE TABLE u (x)", "sql_query is read-only: changing the schema is not allowed"),
        ("CREATE VIEW v AS SELECT 1", "sql_query is read-only: changing the schema is not allowed"),
        ("ATTACH DATABASE ':memory:' AS x", "sql_query is read-only: ATTACH is not allowed"),
        ("PRAGMA query_only = OFF", "sql_query is read-only: PRAGMA is not allowed"),
        ("BEGIN", "sql_query is read-only: TRANSACTION is not allowed"),
    ],
)
def test_the_authorizer_alone_refuses_writes(
    monkeypatch: pytest.MonkeyPatch, sql: str, detail: str
) -> None:
    # Second layer: with the statement check out of the way, the authorizer still refuses.
    monkeypatch.setattr(sql_query, "_single_select", lambda text: text)
    monkeypatch.setattr(sql_query, "table_names", lambda _: ["t"])
    assert refusal(sql, TABLES).detail == detail


@pytest.mark.parametrize(
    "sql", ["INSERT INTO t VALUES (2, 20)", "UPDATE t SET price = 0", "DELETE FROM t"]
)
def test_query_only_alone_refuses_writes(monkeypatch: pytest.MonkeyPatch, sql: str) -> None:
    # Third layer: with the statement check and the authorizer both out of the way.
    monkeypatch.setattr(sql_query, "_single_select", lambda text: text)
    monkeypatch.setattr(sql_query, "table_names", lambda _: ["t"])
    monkeypatch.setattr(sql_query, "_denial", lambda *_: None)
    error = refusal(sql, TABLES)
    assert error.detail == "SQLite refused the query: attempt to write a readonly database"


def test_a_syntax_error_carries_sqlites_message() -> None:
    error = refusal("SELECT FROM WHERE", TABLES)
    assert error.detail == 'SQLite refused the query: near "FROM": syntax error'
    error = refusal("SELECT id FROM t WHERE", TABLES)
    assert error.detail == "SQLite refused the query: incomplete input"
    error = refusal("SELECT nope FROM t", TABLES)
    assert error.detail == "SQLite refused the query: no such column: nope"


@pytest.mark.parametrize("sql", ["", "   ", "-- nothing\n/* at all */"])
def test_an_empty_query_is_refused(sql: str) -> None:
    assert refusal(sql).detail == "the query is empty"


# --- limits -----------------------------------------------------------------------------------


def test_a_runaway_recursive_cte_is_stopped_by_the_time_limit() -> None:
    sql = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT max(n) FROM c"
    started = time.monotonic()
    error = refusal(sql, time_limit_s=0.2)
    assert error.detail == "the query exceeded the time limit of 0.2 s"
    assert time.monotonic() - started < 2.0


def test_a_bounded_recursive_cte_runs() -> None:
    sql = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 4) "
        "SELECT n FROM c"
    )
    assert run_sql_query(sql, {}) == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]


def test_more_rows_than_max_rows_is_an_error_naming_the_limit() -> None:
    rows = [{"i": i} for i in range(6)]
    assert len(run_sql_query("SELECT i FROM t", {"t": rows}, max_rows=6)) == 6
    error = refusal("SELECT i FROM t", {"t": rows}, max_rows=5)
    assert error.detail == "the query returned more than 5 rows (the limit); add a LIMIT"


def test_a_huge_generated_blob_is_refused() -> None:
    error = refusal("SELECT length(zeroblob(200000000)) AS n")
    assert error.detail == "SQLite refused the query: string or blob too big"


# --- the error --------------------------------------------------------------------------------


def test_the_error_sits_in_the_tree_and_carries_its_fields() -> None:
    error = refusal("SELECT * FROM t", {"t": 3})
    assert isinstance(error, InvalidInputError)
    assert isinstance(error, DynamicToolsError)
    assert error.code == "sql_query_failed"
    assert error.retryable is False
    assert error.sql == "SELECT * FROM t"
    assert error.message == error.detail
    assert error.to_dict()["context"] == {"sql": "SELECT * FROM t", "table": "t"}
    assert error.to_dict()["violations"] == [
        {"field": "sql", "message": error.detail, "table": "t"}
    ]


# --- table_names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT id, date, price FROM all_results ORDER BY price ASC LIMIT 5", ["all_results"]),
        ("select * from A join b on a.x = b.x left outer JOIN c using (x)", ["A", "b", "c"]),
        ("SELECT * FROM a, b AS x, main.c WHERE x.k IN (1, 2) ORDER BY a, d", ["a", "b", "c"]),
        ('SELECT * FROM "all results" JOIN [b] JOIN `c"`', ["all results", "b", 'c"']),
        ("SELECT * FROM (SELECT * FROM inner_t) AS s, outer_t", ["inner_t", "outer_t"]),
        ("WITH x AS (SELECT * FROM t) SELECT * FROM x, u", ["t", "u"]),
        (
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c), "
            "d AS MATERIALIZED (SELECT 2) SELECT * FROM c JOIN d",
            [],
        ),
        ("SELECT 'FROM x' FROM -- FROM y\n t /* JOIN z */", ["t"]),
        ("SELECT a IS NOT DISTINCT FROM b FROM t", ["t"]),
        ("SELECT * FROM t JOIN T, json_each(t.segs)", ["t"]),
        ("SELECT 1", []),
    ],
)
def test_table_names(sql: str, names: list[str]) -> None:
    assert table_names(sql) == names
