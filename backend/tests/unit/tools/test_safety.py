"""The safe-by-default rule itself (``tools/safety.py``): one function for REST and GraphQL."""

from __future__ import annotations

import pytest

from dynamic_tools.errors import UnsafeCallRefusedError
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.safety import (
    GraphQLOperation,
    RestCall,
    check_tool_call,
    llm_may_call,
    refusal,
)


def rest_tool(name: str, method: str, path: str) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": "An operation",
            "api": {"method": method, "base_url": "https://api.example.com", "path": path},
        }
    )


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "get"])
def test_reads_pass_whatever_the_session_allows(method: str) -> None:
    assert refusal(RestCall(method, "/books", "list_books"), ()) is None


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_writes_are_refused_naming_the_header_and_the_patterns(method: str) -> None:
    refused = refusal(RestCall(method, "/books/{id}", "change_book"), ())
    assert isinstance(refused, UnsafeCallRefusedError)
    assert refused.code == "unsafe_call_refused"
    assert refused.context == {
        "header": "X-Allow-Unsafe-Paths",
        "allow_with": ["/books/{id}", "change_book"],
        "call": f"{method} /books/{{id}} (change_book)",
    }
    assert "X-Allow-Unsafe-Paths must match one of: '/books/{id}' or 'change_book'" in (
        refused.message
    )
    assert "X-Allow-Unsafe-Paths" in refused.suggestion


@pytest.mark.parametrize(
    ("allow", "allowed"),
    [
        (["/books/*"], True),
        (["/books*"], True),
        (["change_*"], True),
        (["/books"], False),  # a glob matches the whole path
        (["/authors/*", "add_book"], False),
    ],
)
def test_a_write_passes_when_a_pattern_matches_its_path_or_operation_id(
    allow: list[str], allowed: bool
) -> None:
    assert (refusal(RestCall("PUT", "/books/{id}", "change_book"), allow) is None) is allowed


def test_a_rest_call_without_an_operation_id_is_judged_by_its_path() -> None:
    refused = refusal(RestCall("POST", "/books"), ())
    assert refused is not None and refused.context["allow_with"] == ["/books"]
    assert refusal(RestCall("POST", "/books"), ["/books"]) is None


def test_a_mutation_needs_every_root_field_allowed() -> None:
    both = GraphQLOperation("mutation", ("addBook", "removeBook"))
    refused = refusal(both, ["add*"])
    assert refused is not None and refused.context["allow_with"] == ["removeBook"]
    assert refusal(both, ["addBook", "removeBook"]) is None
    assert refusal(GraphQLOperation("query", ("books",)), ()) is None


def test_a_tool_call_is_judged_by_its_operation_or_its_document() -> None:
    add = rest_tool("add_book", "POST", "/books")
    with pytest.raises(UnsafeCallRefusedError):
        check_tool_call(add, {}, ())
    check_tool_call(add, {}, ["add_book"])
    assert not llm_may_call(add, ()) and llm_may_call(add, ["/books"])
    assert llm_may_call(rest_tool("list_books", "GET", "/books"), ())

    free = ToolConfig.model_validate(
        {
            "name": "lib_execute",
            "description": "Any GraphQL operation",
            "api": {"method": "POST", "base_url": "https://api.example.com", "path": "/graphql"},
            "parameters": {
                "query": {"in": "body", "type": "string", "required": True},
                "operationName": {"in": "body", "type": "string"},
            },
            "graphql": {"schema_sdl": "type Query { a: Int }", "allow_mutations": ["*"]},
        }
    )
    document = "query Q { books { id } } mutation M { addBook(title: 1) { id } }"
    check_tool_call(free, {"query": document, "operationName": "Q"}, ())
    with pytest.raises(UnsafeCallRefusedError) as refused:
        check_tool_call(free, {"query": document, "operationName": "M"}, ())
    assert refused.value.context["allow_with"] == ["addBook"]
    check_tool_call(free, {"query": "{ not parsed"}, ())  # the document check refuses it
