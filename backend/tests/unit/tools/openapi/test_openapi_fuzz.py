"""Fuzzing the OpenAPI converter: odd documents give violations and warnings, never a crash.

``convert_document`` promises never to raise for the content of a parsed document; documents
are drawn as trees over OpenAPI's words, and as the shipped fixtures with parts replaced by
such trees. ``parse_document`` turns any bytes into data or an InvalidInputError.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.tools.openapi import (
    ConversionOptions,
    convert_document,
    find_provider_contracts,
    parse_document,
)
from tests.support.fuzz import FUZZ, trees

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "openapi"
DOCUMENTS = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))]

WORDS = [
    "openapi", "3.0.3", "3.1.0", "swagger", "2.0", "info", "title", "servers", "url",
    "variables", "default", "enum", "paths", "/items", "/items/{id}", "get", "post", "put",
    "delete", "patch", "operationId", "summary", "description", "parameters", "name", "in",
    "query", "path", "header", "cookie", "body", "formData", "required", "schema", "type",
    "object", "array", "string", "integer", "number", "boolean", "null", "properties",
    "items", "additionalProperties", "allOf", "oneOf", "anyOf", "not", "$ref",
    "#/components/schemas/Item", "#/definitions/Item", "#/components/parameters/Id",
    "#/components/requestBodies/B", "#/", "#", "components", "schemas", "Item", "requestBody",
    "content", "application/json", "responses", "200", "default", "security",
    "securitySchemes", "securityDefinitions", "apiKey", "http", "bearer", "basic", "oauth2",
    "scheme", "host", "basePath", "schemes", "consumes", "produces", "format", "id",
    "x-tool-name", "tags", "deprecated", "discriminator", "nullable", "readOnly",
]  # fmt: skip
OPTIONS = ConversionOptions(catalog="fuzz", prefix="fz")


def _convert(document: Any) -> None:
    try:
        result = convert_document(document, OPTIONS)
        find_provider_contracts(result.tools)
    except DynamicToolsError as error:  # the converter reports through violations, but
        assert error.message  # a structured error is still a structured error


@st.composite
def openapi_like(draw: st.DrawFn) -> dict[str, Any]:
    """A document that passes the version check, with random parts."""
    version = draw(
        st.sampled_from([{"openapi": "3.0.3"}, {"openapi": "3.1.0"}, {"swagger": "2.0"}])
    )
    body = draw(st.dictionaries(st.sampled_from(WORDS), trees(WORDS), max_size=6))
    return {**body, **version}


@st.composite
def fixture_with_a_part_replaced(draw: st.DrawFn) -> Any:
    """A shipped fixture with one value somewhere replaced by a random tree."""
    document = json.loads(json.dumps(draw(st.sampled_from(DOCUMENTS))))
    node = document
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            key = draw(st.integers(min_value=0, max_value=len(node) - 1))
        else:
            break
        if draw(st.booleans()) or not isinstance(node[key], dict | list):
            node[key] = draw(trees(WORDS, max_leaves=10))
            break
        node = node[key]
    return document


@FUZZ
@given(document=openapi_like())
@example(document={"openapi": "3.0.3", "paths": {"/a": {"get": {"parameters": [None]}}}})
@example(document={"openapi": "3.0.3", "servers": [{"url": "http://[None]"}]})  # was ValueError
@example(document={"openapi": "3.0.3", "servers": [{"url": "http://a:99999"}]})
@example(document={"openapi": "3.0.3", "servers": [{"url": "http://[::1"}]})
def test_documents_over_openapis_words_convert_or_report(document: dict[str, Any]) -> None:
    _convert(document)


SWAGGER_OPERATION = {"parameters": [{"in": "body", "name": "b", "schema": {}}], "responses": {}}


@FUZZ
@given(document=fixture_with_a_part_replaced())
# were TypeError (an unhashable media type) and AttributeError (a media type that is not text)
@example(
    document={"swagger": "2.0", "consumes": [[]], "paths": {"/a": {"post": SWAGGER_OPERATION}}}
)
@example(
    document={
        "swagger": "2.0",
        "produces": [None],
        "paths": {"/a": {"get": {"responses": {"200": {"schema": {"type": "object"}}}}}},
    }
)
def test_fixtures_with_a_part_replaced_convert_or_report(document: Any) -> None:
    _convert(document)


@FUZZ
@given(document=trees(WORDS))
def test_any_value_converts_or_reports(document: Any) -> None:
    _convert(document)


@FUZZ
@given(content=st.one_of(st.binary(max_size=200), st.text(max_size=200)))
@example(content="=")
@example(content=b"\xff\xfe")
def test_any_bytes_parse_or_are_refused(content: bytes | str) -> None:
    try:
        parse_document(content)
    except DynamicToolsError as error:
        assert error.message
