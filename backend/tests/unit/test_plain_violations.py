"""The words of a 422 (api/errors.py): no framework prefixes, a known name pattern in words,
the most useful violation first; over every route, since the error mapping shapes them all."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field, field_validator

from dynamic_tools.api.errors import install_error_handlers
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.plain_messages import PATTERN_WORDS, plain_message, plain_violations
from dynamic_tools.tools.models import TOOL_NAME_PATTERN
from dynamic_tools.tools.openapi.catalog_files import CATALOG_NAME


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Value error, must be a secret reference", "must be a secret reference"),
        ("Assertion failed, too many", "too many"),
        (
            "parameters.q: Value error, not a valid JSON Schema",
            "parameters.q: not a valid JSON Schema",
        ),
        ("no file at 'x.yaml'", "no file at 'x.yaml'"),
        ("a Value error, as words", "a Value error, as words"),
        (
            f"String should match pattern '{CATALOG_NAME.pattern}'",
            "a catalog name is 1-64 letters, digits, '-' or '_', starting with a letter or digit",
        ),
        (
            f"String should match pattern '{TOOL_NAME_PATTERN}'",
            "a tool name is 1-64 letters, digits, '-' or '_'",
        ),
        # a pattern without words stays as it is
        ("String should match pattern '^[a-z]$'", "String should match pattern '^[a-z]$'"),
    ],
)
def test_messages_read_without_framework_prefixes_and_known_patterns_in_words(
    said: str, shown: str
) -> None:
    assert plain_message(said) == shown


def test_every_named_pattern_is_said_without_its_regex() -> None:
    for pattern, words in PATTERN_WORDS.items():
        assert pattern not in words
        assert plain_message(f"String should match pattern '{pattern}'") == words


def test_violations_come_most_useful_first_and_otherwise_in_their_order() -> None:
    violations: list[dict[str, Any]] = [
        {
            "path": "name",
            "rule": "string_pattern_mismatch",
            "message": "String should match pattern '^x$'",
        },
        {"path": "a", "rule": "int_type", "message": "Value error, one"},
        {"path": "source", "rule": "not_found", "message": "no file at 'x'"},
        {"path": "b", "message": "two"},
        {"path": "description", "rule": "missing", "message": "Field required"},
        {"path": "prefix", "rule": "pattern", "message": "a prefix is ..."},
    ]
    assert [(v["path"], v["message"]) for v in plain_violations(violations)] == [
        ("source", "no file at 'x'"),
        ("description", "Field required"),
        ("a", "one"),
        ("b", "two"),
        ("name", "String should match pattern '^x$'"),
        ("prefix", "a prefix is ..."),
    ]


class _Thing(BaseModel):
    name: str = Field(pattern=CATALOG_NAME.pattern)
    size: int

    @field_validator("size")
    @classmethod
    def _small(cls, value: int) -> int:
        if value > 3:
            raise ValueError("at most 3")
        return value


def _app() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/things")
    async def things(thing: _Thing) -> dict[str, str]:
        return {"name": thing.name}

    @app.post("/raise")
    async def refuse() -> None:
        raise InvalidInputError(
            "Value error, the thing is invalid",
            violations=[
                {
                    "path": "x",
                    "rule": "pattern",
                    "message": f"String should match pattern '{TOOL_NAME_PATTERN}'",
                },
                {"path": "y", "message": "Value error, y is wrong"},
                {"path": "z", "rule": "missing", "message": "Field required"},
            ],
        )

    return app


def test_a_request_validation_422_is_plain_and_ordered() -> None:
    with TestClient(_app()) as client:
        answer = client.post("/things", json={"name": "", "size": 9})
        assert answer.status_code == 422
        body = answer.json()
        assert [(v["path"], v["message"]) for v in body["violations"]] == [
            ("body.size", "at most 3"),
            ("body.name", PATTERN_WORDS[CATALOG_NAME.pattern]),
        ]
        assert body["message"] == "the request is invalid: body.size, body.name"
        missing = client.post("/things", json={"name": ""}).json()
        assert [v["path"] for v in missing["violations"]] == ["body.size", "body.name"]
        assert missing["violations"][0]["message"] == "Field required"


def test_a_project_error_422_is_plain_and_ordered() -> None:
    with TestClient(_app()) as client:
        body = client.post("/raise").json()
        assert body["message"] == "the thing is invalid"
        assert [(v["path"], v["message"]) for v in body["violations"]] == [
            ("z", "Field required"),
            ("y", "y is wrong"),
            ("x", "a tool name is 1-64 letters, digits, '-' or '_'"),
        ]


def test_an_mcp_tool_error_says_the_same_words_as_a_rest_answer() -> None:
    from dynamic_tools.mcp.errors import error_payload

    error = InvalidInputError(
        "Value error, the tool is not valid",
        violations=[
            {"path": "name", "rule": "string_pattern_mismatch", "message": "Value error, bad"},
            {"path": "api.path", "rule": "missing", "message": "Field required"},
        ],
    )
    payload = error_payload(error)
    assert payload["message"] == "the tool is not valid"
    assert [v["path"] for v in payload["violations"]] == ["api.path", "name"]
    assert payload["violations"][1]["message"] == "bad"
