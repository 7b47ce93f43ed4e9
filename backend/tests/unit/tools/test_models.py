from typing import Any

import pytest
from pydantic import ValidationError

from dynamic_tools.tools.models import ToolConfig


def tool(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "get_item",
        "description": "Get one item",
        "api": {"method": "GET", "base_url": "https://items.example/v1", "path": "/items/{id}"},
        "parameters": {"id": {"type": "string", "in": "path", "required": True}},
    }
    base.update(overrides)
    return base


def errors_of(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as info:
        ToolConfig.model_validate(data)
    return [(".".join(map(str, e["loc"])), e["msg"]) for e in info.value.errors()]


def test_a_valid_tool_derives_annotations_and_input_schema() -> None:
    config = ToolConfig.model_validate(tool())
    assert config.effective_annotations.read_only is True
    assert config.effective_annotations.destructive is False
    assert config.input_schema() == {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "additionalProperties": False,
        "required": ["id"],
    }


@pytest.mark.parametrize(
    ("method", "read_only", "destructive", "idempotent"),
    [
        ("GET", True, False, True),
        ("POST", False, False, False),
        ("PUT", False, True, True),
        ("DELETE", False, True, True),
        ("PATCH", False, True, False),
    ],
)
def test_annotations_default_from_the_method(
    method: str, read_only: bool, destructive: bool, idempotent: bool
) -> None:
    config = ToolConfig.model_validate(
        tool(api={"method": method, "base_url": "https://x.example", "path": "/a"}, parameters={})
    )
    ann = config.effective_annotations
    assert (ann.read_only, ann.destructive, ann.idempotent) == (read_only, destructive, idempotent)


def test_explicit_annotations_win_over_the_method() -> None:
    config = ToolConfig.model_validate(tool(annotations={"read_only": False}))
    assert config.effective_annotations.read_only is False


def test_a_path_placeholder_needs_a_path_parameter() -> None:
    errs = errors_of(tool(parameters={}))
    assert any("no parameter 'id'" in m for _, m in errs)


def test_a_path_parameter_must_be_in_the_path() -> None:
    errs = errors_of(tool(parameters={"id": {"type": "string", "in": "query"}}))
    assert any("needs 'in: path'" in m for _, m in errs)


def test_a_literal_secret_is_refused() -> None:
    errs = errors_of(tool(auth={"type": "bearer", "secret": "sk-live-123456"}))
    assert (
        "auth.secret",
        "Value error, must be a secret reference like 'env:NAME', never the secret itself",
    ) in errs


def test_invalid_json_schema_in_a_parameter_is_named() -> None:
    errs = errors_of(tool(parameters={"id": {"type": "strng", "in": "path", "required": True}}))
    assert any(
        loc.startswith("parameters.id") and "not a valid JSON Schema" in m for loc, m in errs
    )


def test_names_follow_the_openai_pattern() -> None:
    errs = errors_of(tool(name="has space"))
    assert errs[0][0] == "name"
    errs = errors_of(tool(name="x" * 65))
    assert errs[0][0] == "name"


def test_base_url_must_be_http_and_without_query() -> None:
    for url in ("ftp://x.example", "https://x.example/?a=1", "not a url"):
        errs = errors_of(tool(api={"method": "GET", "base_url": url, "path": "/a"}, parameters={}))
        assert errs[0][0] == "api.base_url"


def test_body_parameters_are_refused_on_get() -> None:
    errs = errors_of(
        tool(
            api={"method": "GET", "base_url": "https://x.example", "path": "/a"},
            parameters={"q": {"type": "string", "in": "body"}},
        )
    )
    assert any("cannot have 'in: body'" in m for _, m in errs)


def test_template_variables_are_replaced_on_request() -> None:
    config = ToolConfig.model_validate(
        tool(
            api={"method": "GET", "base_url": "${PUBLIC_BASE_URL}/demo", "path": "/a"},
            parameters={},
        )
    )
    assert config.template_variables() == ["PUBLIC_BASE_URL"]
    resolved = config.with_variables({"PUBLIC_BASE_URL": "http://127.0.0.1:9"})
    assert resolved.api.base_url == "http://127.0.0.1:9/demo"
    assert config.api.base_url == "${PUBLIC_BASE_URL}/demo"
