"""Servers, security schemes, unrepresentable operations and malformed documents."""

from typing import Any

import pytest

from dynamic_tools.tools.openapi import ConversionOptions, convert_document
from tests.unit.tools.openapi.conftest import convert


def test_server_variables_take_their_defaults() -> None:
    result = convert("server-variables-3.0.json")
    assert result.valid and result.base_url == "https://demo.example.com:443/v2"


def _doc(servers: Any = None, **op: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/items": {"get": {"operationId": "list", "responses": {}, **op}}},
    }
    if servers is not None:
        doc["servers"] = servers
    return doc


def test_relative_servers_resolve_against_the_document_url() -> None:
    options = ConversionOptions(document_url="https://api.example.com/specs/openapi.json")
    result = convert_document(_doc([{"url": "/v3"}]), options)
    assert result.tools[0].api.base_url == "https://api.example.com/v3"
    result = convert_document(_doc(), options)  # no servers: "/" of the document's host
    assert result.tools[0].api.base_url == "https://api.example.com"


def test_a_relative_server_without_a_document_url_is_a_violation_unless_base_url_given() -> None:
    result = convert_document(_doc([{"url": "/v3"}]))
    assert not result.tools and result.violations[0].rule == "no_base_url"
    assert "pass base_url" in result.violations[0].message
    fixed = convert_document(_doc([{"url": "/v3"}]), ConversionOptions(base_url="http://h:1/x"))
    assert fixed.valid and fixed.tools[0].api.base_url == "http://h:1/x"


def test_operation_level_servers_win() -> None:
    doc = _doc([{"url": "https://a.example.com"}])
    doc["paths"]["/items"]["get"]["servers"] = [{"url": "https://b.example.com/z"}]
    assert convert_document(doc).tools[0].api.base_url == "https://b.example.com/z"


def test_security_schemes_map_to_secret_references_never_values() -> None:
    result = convert("security-3.0.json", catalog="acme")
    auth = {t.name: t.auth for t in result.tools}
    kinds = {(a.type, a.location, a.name, a.secret) for a in auth.values()}
    assert ("api_key", "header", "X-API-KEY", "secret:ACME_TOKEN") in kinds
    assert ("api_key", "query", "apiKey", "secret:ACME_TOKEN") in kinds
    assert ("bearer", "header", None, "secret:ACME_TOKEN") in kinds
    unsupported = {w.path: w.message for w in result.warnings if w.rule == "unsupported_security"}
    assert "#/components/securitySchemes/apiKey_cookie" in unsupported
    assert "user name" in unsupported["#/components/securitySchemes/basic"]


def test_cookies_keep_their_place_and_file_uploads_warn_and_never_crash() -> None:
    cookies = convert("parameters-cookies-3.0.json")
    assert not [w for w in cookies.warnings if w.rule == "cookie_parameter"]
    assert any(p.location == "cookie" for t in cookies.tools for p in t.parameters.values())
    uploads = convert("file-uploads-3.0.json")
    assert uploads.valid and {w.rule for w in uploads.warnings} == {"unsupported_body"}
    assert {w.path for w in uploads.warnings} == {"#/paths/~1anything~1image-png/post/requestBody"}
    kinds = {t.api.path + " " + t.api.method: t.api.content_type for t in uploads.tools}
    assert kinds == {
        "/anything/image-png POST": "application/json",  # its optional raw body was dropped
        "/anything/multipart-formdata POST": "multipart/form-data",
        "/anything/multipart-formdata PUT": "multipart/form-data",
    }


def test_a_required_form_body_without_fields_skips_the_operation_with_its_pointer() -> None:
    doc = _doc(
        [{"url": "https://x.example.com"}],
        parameters=[{"name": "session", "in": "cookie", "required": True}],
    )
    doc["paths"]["/upload"] = {
        "post": {
            "requestBody": {
                "required": True,
                "content": {"multipart/form-data": {"schema": {"type": "object"}}},
            },
            "responses": {},
        }
    }
    result = convert_document(doc)
    assert result.valid and [t.parameters["session"].location for t in result.tools] == ["cookie"]
    assert {(w.path, w.rule) for w in result.warnings} == {
        ("#/paths/~1upload/post", "non_object_body"),
    }


def test_head_options_trace_and_delete_with_a_required_body_are_skipped() -> None:
    doc = _doc([{"url": "https://x.example.com"}])
    doc["paths"]["/items"]["head"] = {"responses": {}}
    doc["paths"]["/items"]["delete"] = {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object", "properties": {}}}},
        },
        "responses": {},
    }
    result = convert_document(doc)
    assert result.operation_count == 3 and [t.name for t in result.tools] == ["list"]
    assert {w.rule for w in result.warnings} == {"unsupported_method", "body_not_allowed"}


@pytest.mark.parametrize(
    "paths",
    [
        {"/a": None},
        {"/a": {"get": "nope"}},
        {"/a": {"get": {"parameters": "x", "responses": []}}},
        {"/a": {"get": {"parameters": [{"$ref": "#/nowhere"}]}}},
        {"/a": {"get": {"parameters": [{"name": "q", "in": "query", "schema": {"type": "file"}}]}}},
        {"/a": {"get": {"parameters": [{"in": "query"}]}}},
        {"/a/{id}": {"get": {}}},
        {"/a": {"post": {"requestBody": {"content": {"application/json": {"schema": []}}}}}},
        {"/a": {"$ref": "#/paths/~1a"}},
        {"/a": {"get": {"responses": {"200": {"content": {"application/json": {"schema": 3}}}}}}},
    ],
)
def test_malformed_operations_never_raise(paths: dict[str, Any]) -> None:
    doc = {"openapi": "3.0.0", "info": {}, "servers": [{"url": "https://x.io"}], "paths": paths}
    result = convert_document(doc)
    for tool in result.tools:
        assert tool.name and tool.api.base_url == "https://x.io"


def test_documents_that_are_not_openapi_are_violations() -> None:
    assert convert_document({"swagger": "1.2"}).violations[0].rule == "unknown_kind"
    empty = convert_document({"openapi": "3.1.0", "info": {}, "paths": {}})
    assert [v.rule for v in empty.violations] == ["no_operations"]
    bad = convert_document({"openapi": "3.1.0", "paths": []})
    assert "invalid_paths" in {v.rule for v in bad.violations}


def test_parameters_named_like_credentials_and_token_examples_still_import() -> None:
    """Parameters the caller fills are not literals, and schema examples are never sent: an
    operation declaring api_key, password or a JWT example imports like any other."""
    jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmN"
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/login": {
                "post": {
                    "operationId": "login",
                    "parameters": [
                        {"name": "api_key", "in": "query", "schema": {"type": "string"}},
                        {"name": "X-Session", "in": "header", "example": f"Bearer {jwt}"},
                    ],
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "username": {"type": "string"},
                                        "password": {"type": "string", "example": "hunter2"},
                                        "token": {"type": "string", "default": jwt},
                                    },
                                }
                            }
                        }
                    },
                    "responses": {},
                }
            }
        },
    }
    result = convert_document(doc)
    assert result.valid and not result.warnings, result.warnings
    [login] = result.tools
    assert {"api_key", "X-Session", "password", "token"} <= set(login.parameters)
    assert login.static_params.body == {} and login.static_params.header == {}
