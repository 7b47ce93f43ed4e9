"""Form and multipart bodies: how a tool's body fields are encoded, shown and refused."""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
from typing import Any
from urllib.parse import parse_qsl, quote_plus

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from pytest_httpx import HTTPXMock

from dynamic_tools.errors import ConfigurationError, InvalidInputError
from dynamic_tools.http.form_bodies import form_pairs, urlencoded
from dynamic_tools.http.request_builder import build_request
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.validators import ArgumentValidators

CLIENT_SECRET = "cs-live-41f0c9e2d7"
SECRETS = {"CLIENT_SECRET": CLIENT_SECRET}


def lookup(name: str) -> str | None:
    return SECRETS.get(name)


def tool(content_type: str, parameters: dict[str, Any], **extra: Any) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": "t",
            "description": "d",
            "api": {
                "method": "POST",
                "base_url": "https://api.example",
                "path": "/x",
                "content_type": content_type,
            },
            "parameters": parameters,
            **extra,
        }
    )


def token_tool(content_type: str = "application/x-www-form-urlencoded") -> ToolConfig:
    return tool(
        content_type,
        {"scope": {"type": "string", "in": "body"}},
        static_params={
            "body": {
                "grant_type": "client_credentials",
                "client_id": "dt-client",
                "client_secret": "secret:CLIENT_SECRET",
            }
        },
    )


def parts_of(content_type: str, body: bytes) -> list[tuple[str, str | None, str | None, bytes]]:
    """(name, filename, content type, bytes) of each part of a multipart body."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    found = []
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        found.append(
            (
                str(part.get_param("name", header="content-disposition")),
                part.get_filename(),
                part.get("content-type"),
                payload,
            )
        )
    return found


def test_form_pairs_follow_openapi_form_explode_defaults() -> None:
    pairs = form_pairs(
        {
            "name": "Ada Lovelace",
            "active": True,
            "off": False,
            "count": 3,
            "ratio": 0.5,
            "tags": ["a", "b"],
            "address": {"city": "Paris", "zip": "75001", "unit": None},
            "missing": None,
            "deep": [{"k": 1}],
        }
    )
    assert pairs == [
        ("name", "Ada Lovelace"),
        ("active", "true"),
        ("off", "false"),
        ("count", "3"),
        ("ratio", "0.5"),
        ("tags", "a"),
        ("tags", "b"),
        ("city", "Paris"),
        ("zip", "75001"),
        ("deep", '{"k":1}'),
    ]
    assert urlencoded(pairs[:1]) == b"name=Ada+Lovelace"


def test_a_static_secret_reference_is_sent_and_masked_in_the_spec() -> None:
    request = build_request(token_tool(), {"scope": "read"}, secret=lookup)
    assert request.form == (
        ("grant_type", "client_credentials"),
        ("client_id", "dt-client"),
        ("client_secret", CLIENT_SECRET),
        ("scope", "read"),
    )
    assert CLIENT_SECRET in request.secret_values
    spec = request.http_spec()
    assert spec["content_type"] == "application/x-www-form-urlencoded"
    assert spec["body"] == {
        "grant_type": "client_credentials",
        "client_id": "dt-client",
        "client_secret": "***",
        "scope": "read",
    }
    assert CLIENT_SECRET not in str(spec)


def test_the_same_reference_works_in_a_json_body() -> None:
    request = build_request(token_tool("application/json"), {}, secret=lookup)
    assert request.body["client_secret"] == CLIENT_SECRET
    assert request.http_spec()["body"]["client_secret"] == "***"
    assert request.http_spec()["content_type"] == "application/json"


def test_an_unset_secret_names_the_reference_never_a_value() -> None:
    with pytest.raises(ConfigurationError) as missing:
        build_request(token_tool(), {}, secret=lambda _: None)
    assert "secret:CLIENT_SECRET" in missing.value.message
    assert "DT_SECRET_CLIENT_SECRET" in missing.value.message


def test_a_run_value_is_never_a_secret_reference() -> None:
    """A rest_call's body holds a run's values: a 'secret:X' text is sent as it is."""
    config = ToolConfig.model_validate(
        {
            "name": "rest_call",
            "description": "d",
            "api": {"method": "POST", "base_url": "https://api.example"},
            "static_params": {"body": {"note": "secret:CLIENT_SECRET"}},
        },
        context={"run_values": True},
    )
    request = build_request(config, {}, secret=lookup)
    assert request.body == {"note": "secret:CLIENT_SECRET"}
    assert request.secret_values == ()


def test_literal_credentials_in_body_fields_stay_refused() -> None:
    with pytest.raises(ValidationError) as refused:
        tool(
            "application/x-www-form-urlencoded",
            {},
            static_params={"body": {"client_secret": "x1y2z3"}},
        )
    error = refused.value.errors()[0]
    assert error["loc"] == ("static_params", "body", "client_secret")
    assert "secret:NAME" in error["msg"] and "x1y2z3" not in str(refused.value)
    with pytest.raises(ValidationError) as nested:
        tool("application/json", {}, static_params={"body": {"auth": {"password": "secret:P"}}})
    assert nested.value.errors()[0]["loc"] == ("static_params", "body", "auth", "password")
    assert "top-level" in nested.value.errors()[0]["msg"]
    with pytest.raises(ValidationError) as bad:
        tool("application/json", {}, static_params={"body": {"client_secret": "secret:no way"}})
    assert bad.value.errors()[0]["loc"] == ("static_params", "body", "client_secret")


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {
                "api": {
                    "method": "GET",
                    "base_url": "https://a.example",
                    "content_type": "multipart/form-data",
                }
            },
            "GET",
        ),
        (
            {
                "api": {
                    "method": "DELETE",
                    "base_url": "https://a.example",
                    "content_type": "application/x-www-form-urlencoded",
                }
            },
            "DELETE",
        ),
        (
            {
                "api": {
                    "method": "POST",
                    "base_url": "https://a.example",
                    "content_type": "multipart/form-data",
                },
                "graphql": {"document": "query { a }"},
            },
            "GraphQL",
        ),
        (
            {
                "api": {
                    "method": "POST",
                    "base_url": "https://a.example",
                    "content_type": "text/plain",
                }
            },
            "literal",
        ),
    ],
)
def test_a_content_type_that_cannot_be_sent_is_refused_naming_the_field(
    changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        ToolConfig.model_validate({"name": "t", "description": "d", **changes})
    error = refused.value.errors()[0]
    assert error["loc"][:2] == ("api", "content_type")
    assert expected in error["msg"] or expected in error["type"]


def test_the_default_content_type_is_not_written_back() -> None:
    default = tool("application/json", {})
    assert "content_type" not in default.model_dump()["api"]
    form = tool("multipart/form-data", {})
    assert form.model_dump()["api"]["content_type"] == "multipart/form-data"
    assert ToolConfig.model_validate(form.model_dump()) == form


UPLOAD = {
    "file": {"type": "string", "format": "binary", "in": "body", "required": True},
    "avatar": {
        "type": "string",
        "contentEncoding": "base64",
        "contentMediaType": "image/png",
        "in": "body",
    },
    "attachments": {"type": "array", "items": {"type": "string", "format": "binary"}, "in": "body"},
    "meta": {"type": "object", "in": "body"},
    "title": {"type": "string", "in": "body"},
    "public": {"type": "boolean", "in": "body"},
}
PNG = b"\x89PNG\r\n\x1a\n\x00\x01"


def test_a_file_field_takes_a_string_or_a_file_object_in_the_input_schema() -> None:
    config = tool("multipart/form-data", UPLOAD)
    validators = ArgumentValidators()
    good = {
        "file": {"filename": "a.txt", "content_type": "text/plain", "content": "hello"},
        "avatar": base64.b64encode(PNG).decode(),
        "attachments": ["one", {"content_base64": "dHdv"}],
    }
    assert validators.violations(config, good) == []
    wrong = validators.violations(config, {"file": {"filename": "a.txt"}})
    assert [v.path for v in wrong] == ["file"]
    # a JSON tool's schema is the schema as written
    assert tool(
        "application/json", {"f": {"type": "string", "format": "binary", "in": "body"}}
    ).input_schema()["properties"]["f"] == {"type": "string", "format": "binary"}


async def test_multipart_parts_on_the_wire(httpx_mock: HTTPXMock) -> None:
    config = tool("multipart/form-data", UPLOAD)
    arguments = {
        "file": {"filename": "notes.txt", "content_type": "text/plain", "content": "héllo"},
        "avatar": base64.b64encode(PNG).decode(),
        "attachments": ["first", {"filename": "b.bin", "content_base64": "AAEC"}],
        "meta": {"lang": "fr", "pages": [1, 2]},
        "title": "Report",
        "public": False,
    }
    request = build_request(config, arguments, secret=lookup)
    spec = request.http_spec()
    assert spec["content_type"] == "multipart/form-data"
    assert spec["body"]["file"] == {
        "filename": "notes.txt",
        "content_type": "text/plain",
        "size_bytes": 6,
    }
    assert spec["body"]["attachments"][1] == {
        "filename": "b.bin",
        "content_type": "application/octet-stream",
        "size_bytes": 3,
    }
    assert spec["body"]["title"] == "Report"

    httpx_mock.add_response(json={"ok": True})
    async with httpx.AsyncClient() as client:
        sender = HttpSender(client, TargetGuard(["api.example"]), max_response_bytes=1000)
        await sender.send(request, extra_headers={"Content-Type": "application/json"})
    sent = httpx_mock.get_requests()[0]
    content_type = sent.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    assert parts_of(content_type, sent.content) == [
        ("file", "notes.txt", "text/plain", "héllo".encode()),
        ("avatar", "avatar", "image/png", PNG),
        ("attachments", "attachments", "application/octet-stream", b"first"),
        ("attachments", "b.bin", "application/octet-stream", b"\x00\x01\x02"),
        ("meta", None, "application/json", b'{"lang":"fr","pages":[1,2]}'),
        ("title", None, None, b"Report"),
        ("public", None, None, b"false"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (42, "must be a string"),
        ({"filename": "a"}, "exactly one of content_base64 and content"),
        ({"content_base64": "not base64!"}, "not valid base64"),
        ({"content": "x", "content_type": "text/plain\r\nX-Evil: 1"}, "not a media type"),
        ({"content": "x", "filename": "a\nb"}, "control characters"),
        ({"content": "x", "path": "/etc/passwd"}, "unknown keys"),
    ],
)
def test_a_bad_file_value_is_refused_naming_the_field(value: Any, message: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        build_request(tool("multipart/form-data", UPLOAD), {"file": value}, secret=lookup)
    assert message in refused.value.message and "'file'" in refused.value.message
    assert refused.value.violations[0]["path"] == "file"


async def test_form_bytes_and_content_type_on_the_wire(httpx_mock: HTTPXMock) -> None:
    request = build_request(token_tool(), {"scope": "read write"}, secret=lookup)
    httpx_mock.add_response(json={"echo": f"client_secret={CLIENT_SECRET}"})
    async with httpx.AsyncClient() as client:
        sender = HttpSender(client, TargetGuard(["api.example"]), max_response_bytes=1000)
        result = await sender.send(request, extra_headers={"content-type": "text/plain"})
    sent = httpx_mock.get_requests()[0]
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    assert parse_qsl(sent.content.decode()) == [
        ("grant_type", "client_credentials"),
        ("client_id", "dt-client"),
        ("client_secret", CLIENT_SECRET),
        ("scope", "read write"),
    ]
    assert sent.content.endswith(b"scope=read+write")
    assert result.body == {"echo": "client_secret=***"}  # an echo of the form field is masked


def test_the_model_sees_a_body_secret_as_authenticated_and_catalogs_list_it() -> None:
    from dynamic_tools.tools.auth_status import secrets_needed
    from dynamic_tools.tools.context import format_tool

    shown = format_tool(token_tool())
    assert "body client_secret: [authenticated]" in shown
    assert "CLIENT_SECRET" not in shown
    assert "body grant_type: client_credentials" in shown
    assert secrets_needed([token_tool()]) == ["secret:CLIENT_SECRET"]


async def test_a_form_answer_echoing_the_secret_is_read_and_masked(httpx_mock: HTTPXMock) -> None:
    request = build_request(token_tool(), {}, secret=lookup)
    httpx_mock.add_response(
        content=f"access_token=at-77&client_secret={quote_plus(CLIENT_SECRET)}".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    async with httpx.AsyncClient() as client:
        sender = HttpSender(client, TargetGuard(["api.example"]), max_response_bytes=1000)
        result = await sender.send(request)
    assert result.body == {"access_token": "at-77", "client_secret": "***"}


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
_VALUE = st.one_of(_TEXT, st.integers(), st.booleans(), st.lists(_TEXT, max_size=3))


@given(st.dictionaries(_TEXT.filter(bool), _VALUE, max_size=6))
def test_any_form_round_trips_through_a_form_parser(body: dict[str, Any]) -> None:
    """Whatever the text, the API reads back the pairs that were meant."""
    pairs = form_pairs(body)
    assert parse_qsl(urlencoded(pairs).decode("ascii"), keep_blank_values=True) == pairs
    expected = [
        (name, item if isinstance(item, str) else json.dumps(item))
        for name, value in body.items()
        for item in (value if isinstance(value, list) else [value])
    ]
    assert pairs == expected
