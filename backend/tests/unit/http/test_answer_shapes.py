"""The pipeline's ``http_spec`` and ``raw_response`` have the shapes the API documents.

``WorkflowResponse`` keeps both as the mappings ``PreparedRequest.http_spec`` and
``HttpResult.to_dict`` build, documented with ``HttpSpec`` and ``RawResponse`` (closed models):
each mapping validates against its model and dumps back unchanged, every optional key present.
"""

from __future__ import annotations

from typing import Any

from dynamic_tools.http.request_builder import build_request
from dynamic_tools.http.sender import HttpResult
from dynamic_tools.selection.models import HttpSpec, RawResponse
from dynamic_tools.tools.models import ToolConfig


def _tool() -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": "put_item",
            "description": "Put an item",
            "api": {"method": "POST", "base_url": "https://items.example/v1", "path": "/items"},
            "parameters": {
                "tags": {"in": "query", "type": "array", "items": {"type": "string"}},
                "limit": {"in": "query", "type": "integer"},
                "X-Trace": {"in": "header", "type": "string"},
                "title": {"in": "body", "type": "string"},
            },
            "auth": {"type": "api_key", "in": "query", "name": "key", "secret": "secret:K"},
        }
    )


def _round_trip(model: type[HttpSpec | RawResponse], shown: dict[str, Any]) -> None:
    assert model.model_validate(shown).model_dump(mode="json") == shown


def test_the_request_as_shown_is_an_http_spec() -> None:
    full = build_request(
        _tool(),
        {"tags": ["a", "b"], "limit": 3, "X-Trace": "t", "title": "Hi"},
        secret=lambda _: "value-1234",
    ).http_spec()
    assert set(full) == set(HttpSpec.model_fields)
    _round_trip(HttpSpec, full)
    bare = build_request(
        _tool().model_copy(update={"auth": _tool().auth.model_copy(update={"type": "none"})}),
        {},
        secret=lambda _: None,
    ).http_spec()
    assert set(bare) == {"method", "url"}
    _round_trip(HttpSpec, bare)


def test_the_answer_as_shown_is_a_raw_response() -> None:
    full = HttpResult(
        status_code=200,
        body={"errors": [{"message": "no", "path": ["item", 0]}]},
        headers={"content-type": "application/json"},
        elapsed_ms=1.5,
        truncated=True,
        graphql_errors=[{"message": "no", "path": ["item", 0]}],
    ).to_dict()
    assert set(full) == set(RawResponse.model_fields)
    _round_trip(RawResponse, full)
    bare = HttpResult(status_code=204, body=None).to_dict()
    assert set(bare) == {"status_code", "headers", "body", "execution_time_ms"}
    _round_trip(RawResponse, bare)
