"""Form and multipart request bodies become tools: the media type chosen, encodings honoured."""

from __future__ import annotations

from typing import Any

from dynamic_tools.http.request_builder import build_request
from dynamic_tools.tools.openapi import convert_document


def _doc(path: str, content: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://auth.example.com"}],
        "paths": {
            path: {
                "post": {
                    "operationId": "op",
                    "requestBody": {"required": required, "content": content},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }


TOKEN_FORM = {
    "application/x-www-form-urlencoded": {
        "schema": {
            "type": "object",
            "required": ["grant_type"],
            "properties": {
                "grant_type": {"type": "string", "enum": ["client_credentials"]},
                "client_id": {"type": "string"},
                "client_secret": {"type": "string"},
                "scope": {"type": "string"},
            },
        }
    }
}


def test_a_form_token_endpoint_becomes_a_form_tool() -> None:
    result = convert_document(_doc("/oauth/token", TOKEN_FORM))
    assert result.valid and result.warnings == []
    (tool,) = result.tools
    assert tool.api.content_type == "application/x-www-form-urlencoded"
    assert {n: (p.location, p.required) for n, p in tool.parameters.items()} == {
        "grant_type": ("body", True),
        "client_id": ("body", False),
        "client_secret": ("body", False),
        "scope": ("body", False),
    }
    request = build_request(
        tool, {"grant_type": "client_credentials", "scope": "a b"}, secret=lambda _: None
    )
    assert request.form == (("grant_type", "client_credentials"), ("scope", "a b"))


def test_json_is_preferred_then_form_then_multipart() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    both = {
        "multipart/form-data": {"schema": schema},
        "application/x-www-form-urlencoded": {"schema": schema},
        "application/vnd.api+json": {"schema": schema},
    }
    assert convert_document(_doc("/x", both)).tools[0].api.content_type == "application/json"
    del both["application/vnd.api+json"]
    form = convert_document(_doc("/x", both)).tools[0]
    assert form.api.content_type == "application/x-www-form-urlencoded"
    # a JSON tool's file keeps its api as it was: no content_type written
    assert (
        "content_type"
        not in convert_document(_doc("/x", {"application/json": {"schema": schema}}))
        .tools[0]
        .model_dump()["api"]
    )


def test_a_multipart_upload_with_a_binary_field_and_its_encoding() -> None:
    content = {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "meta": {"type": "object", "properties": {"lang": {"type": "string"}}},
                    "note": {"type": "string"},
                },
            },
            "encoding": {
                "file": {"contentType": "image/png"},
                "meta": {"contentType": "application/json"},
                "note": {"contentType": "application/xml", "headers": {"X-Rate": {}}},
            },
        }
    }
    result = convert_document(_doc("/upload", content))
    (tool,) = result.tools
    assert tool.api.content_type == "multipart/form-data"
    assert tool.parameters["file"].required and tool.parameters["file"].location == "body"
    assert tool.parameters["file"].schema_["contentMediaType"] == "image/png"
    assert [(w.path, w.rule) for w in result.warnings] == [
        (
            "#/paths/~1upload/post/requestBody/content/multipart~1form-data/encoding/note",
            "encoding_not_honoured",
        )
    ]
    assert "'application/xml'" in result.warnings[0].message
    assert "part headers" in result.warnings[0].message
    # the file field takes a string or a file object
    file_schema = tool.input_schema()["properties"]["file"]
    assert file_schema["anyOf"][1]["properties"]["content_base64"]["contentEncoding"] == "base64"
    request = build_request(
        tool, {"file": {"content_base64": "iVBORw==", "filename": "a.png"}}, secret=lambda _: None
    )
    assert [(p.name, p.filename, p.content_type) for p in request.parts] == [
        ("file", "a.png", "image/png")
    ]


def test_a_form_style_a_tool_cannot_send_warns() -> None:
    content = {
        "application/x-www-form-urlencoded": {
            "schema": {"type": "object", "properties": {"ids": {"type": "array"}}},
            "encoding": {"ids": {"style": "pipeDelimited", "explode": False}},
        }
    }
    result = convert_document(_doc("/x", content))
    assert result.tools[0].api.content_type == "application/x-www-form-urlencoded"
    assert [w.rule for w in result.warnings] == ["encoding_not_honoured"]
    assert "pipeDelimited" in result.warnings[0].message


def test_other_media_types_still_skip_a_required_body() -> None:
    result = convert_document(_doc("/x", {"application/xml": {"schema": {"type": "object"}}}))
    assert result.tools == []
    assert [w.rule for w in result.warnings] == ["unsupported_body"]
    assert "not JSON, a form or multipart form data" in result.warnings[0].message


def test_swagger_2_form_data_becomes_a_form_tool() -> None:
    doc = {
        "swagger": "2.0",
        "info": {"title": "t", "version": "1"},
        "host": "auth.example.com",
        "schemes": ["https"],
        "paths": {
            "/token": {
                "post": {
                    "operationId": "token",
                    "consumes": ["application/x-www-form-urlencoded"],
                    "parameters": [
                        {"name": "grant_type", "in": "formData", "type": "string", "required": True}
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/upload": {
                "post": {
                    "operationId": "upload",
                    "parameters": [{"name": "file", "in": "formData", "type": "file"}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    tools = {t.name: t for t in convert_document(doc).tools}
    assert tools["token"].api.content_type == "application/x-www-form-urlencoded"
    assert tools["upload"].api.content_type == "multipart/form-data"
    assert tools["upload"].parameters["file"].schema_ == {"type": "string", "format": "binary"}
