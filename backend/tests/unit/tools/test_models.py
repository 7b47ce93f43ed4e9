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
    assert errs[0][0] == "auth.secret"
    assert "never the secret itself" in errs[0][1]


@pytest.mark.parametrize(
    "reference",
    ["env:API_TOKEN", "env:OPENAI_API_KEY", "env:DATABASE_URL", "env:HOME", "env:ITEMS_KEY"],
)
def test_a_secret_reference_outside_the_tool_namespace_is_refused(reference: str) -> None:
    errs = errors_of(tool(auth={"type": "bearer", "secret": reference}))
    assert errs[0][0] == "auth.secret"
    name = reference.split(":", 1)[1]
    assert f"secret:{name}" in errs[0][1] and f"DT_SECRET_{name}" in errs[0][1]


@pytest.mark.parametrize(
    ("reference", "name"),
    [("secret:ITEMS_KEY", "ITEMS_KEY"), ("env:DT_SECRET_ITEMS_KEY", "ITEMS_KEY")],
)
def test_tool_secrets_are_named_in_their_own_namespace(reference: str, name: str) -> None:
    config = ToolConfig.model_validate(tool(auth={"type": "bearer", "secret": reference}))
    assert config.auth.secret_name == name


@pytest.mark.parametrize(
    ("where", "name"),
    [
        ("header", "Authorization"),
        ("header", "proxy-authorization"),
        ("header", "X-API-Key"),
        ("header", "X-Auth-Token"),
        ("header", "Cookie"),
        ("header", "X-Client-Secret"),
        ("query", "api_key"),
        ("query", "apikey"),
        ("query", "access_token"),
        ("query", "password"),
        ("query", "client_secret"),
        ("query", "sig"),
    ],
)
def test_literal_credentials_in_static_params_are_refused(where: str, name: str) -> None:
    errs = errors_of(tool(static_params={where: {name: "sk-live-0123456789"}}))
    assert errs[0][0] == f"static_params.{where}.{name}"
    assert f"'{name}'" in errs[0][1] and "auth" in errs[0][1]


def test_ordinary_static_params_are_kept() -> None:
    config = ToolConfig.model_validate(
        tool(static_params={"header": {"Accept": "application/json"}, "query": {"v": 2}})
    )
    assert config.static_params.header == {"Accept": "application/json"}


def test_userinfo_in_the_base_url_is_refused() -> None:
    for url in ("https://bob:hunter22@x.example", "https://token@x.example/v1"):
        errs = errors_of(tool(api={"method": "GET", "base_url": url, "path": "/a"}, parameters={}))
        assert errs[0][0] == "api.base_url" and "credentials" in errs[0][1]
        assert "hunter22" not in errs[0][1]


@pytest.mark.parametrize(
    "url", ["http://0177.0.0.1:8000", "http://host:1:2", "http://[::1", "http://exa mple.com"]
)
def test_a_base_url_http_cannot_use_is_refused_at_load(url: str) -> None:
    errs = errors_of(tool(api={"method": "GET", "base_url": url, "path": "/a"}, parameters={}))
    assert errs[0][0] == "api.base_url"


@pytest.mark.parametrize("value", ["café", "a\u2028b", "line\nbreak", "nul\x00"])
def test_static_header_values_must_be_ascii(value: str) -> None:
    errs = errors_of(tool(static_params={"header": {"X-Note": value}}))
    assert errs[0][0] == "static_params.header" and "'X-Note'" in errs[0][1]


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
