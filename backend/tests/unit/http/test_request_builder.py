from typing import Any

import pytest

from dynamic_tools.errors import ConfigurationError, InvalidInputError
from dynamic_tools.http.request_builder import build_request
from dynamic_tools.tools.models import ToolConfig

SECRETS = {"ITEMS_KEY": "items-secret-value-991"}


def lookup(name: str) -> str | None:
    return SECRETS.get(name)


def make_tool(**overrides: Any) -> ToolConfig:
    data: dict[str, Any] = {
        "name": "update_item",
        "description": "Update an item",
        "api": {
            "method": "POST",
            "base_url": "https://items.example/v1",
            "path": "/items/{item_id}",
        },
        "parameters": {
            "item_id": {"type": "string", "in": "path", "required": True},
            "tags": {"type": "array", "items": {"type": "string"}, "in": "query"},
            "dry_run": {"type": "boolean", "in": "query"},
            "X-Trace": {"type": "string", "in": "header"},
            "title": {"type": "string", "in": "body"},
        },
        "static_params": {"query": {"v": 2}, "body": {"source": "llm"}},
        "auth": {"type": "api_key", "in": "query", "name": "key", "secret": "secret:ITEMS_KEY"},
    }
    data.update(overrides)
    return ToolConfig.model_validate(data)


def test_arguments_are_placed_by_location_and_secrets_masked() -> None:
    req = build_request(
        make_tool(),
        {"item_id": "a b/c", "tags": ["x", "y"], "dry_run": True, "X-Trace": "t1", "title": "Hi"},
        secret=lookup,
    )
    assert req.url == "https://items.example/v1/items/a%20b%2Fc"
    assert req.query == [
        ("v", "2"),
        ("tags", "x"),
        ("tags", "y"),
        ("dry_run", "true"),
        ("key", "items-secret-value-991"),
    ]
    assert req.headers == {"X-Trace": "t1"}
    assert req.body == {"source": "llm", "title": "Hi"}
    spec = req.http_spec()
    assert spec["query_params"]["key"] == "***"
    assert spec["query_params"]["tags"] == ["x", "y"]
    assert "items-secret-value-991" not in repr(spec)


@pytest.mark.parametrize(
    "value", ["..", ".", "../admin", "..%2fadmin", "%2e%2e", "%252e%252e", "a/../../b", "..\\x", ""]
)
def test_dot_segments_in_path_values_are_refused(value: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        build_request(make_tool(), {"item_id": value}, secret=lookup)
    assert info.value.violations[0]["path"] == "item_id"


def test_header_injection_is_refused() -> None:
    with pytest.raises(InvalidInputError) as info:
        build_request(make_tool(), {"item_id": "1", "X-Trace": "a\r\nX-Admin: 1"}, secret=lookup)
    assert "X-Trace" in info.value.message


def test_a_missing_secret_names_the_variable_not_a_value() -> None:
    with pytest.raises(ConfigurationError) as info:
        build_request(make_tool(), {"item_id": "1"}, secret=lambda _: None)
    assert "ITEMS_KEY" in info.value.message


def test_bearer_and_basic_auth_are_masked_in_the_spec() -> None:
    bearer = make_tool(auth={"type": "bearer", "secret": "secret:ITEMS_KEY"})
    req = build_request(bearer, {"item_id": "1"}, secret=lookup)
    assert req.headers["Authorization"] == "Bearer items-secret-value-991"
    assert req.http_spec()["headers"]["Authorization"] == "***"
    basic = make_tool(auth={"type": "basic", "username": "bob", "secret": "secret:ITEMS_KEY"})
    req = build_request(basic, {"item_id": "1"}, secret=lookup)
    assert req.headers["Authorization"].startswith("Basic ")
    assert req.http_spec()["headers"]["Authorization"] == "***"
    assert req.headers["Authorization"] in req.secret_values


@pytest.mark.parametrize("value", ["café", "naïve", "a\u2028b", "emoji 🙂", "del\x7f"])
def test_header_values_http_cannot_carry_are_refused_naming_the_header(value: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        build_request(make_tool(), {"item_id": "1", "X-Trace": value}, secret=lookup)
    assert info.value.violations[0]["path"] == "X-Trace"
    assert "ASCII" in info.value.message and "X-Trace" in info.value.message


def test_a_secret_a_header_cannot_carry_is_named_not_shown() -> None:
    bearer = make_tool(auth={"type": "bearer", "secret": "secret:ITEMS_KEY"})
    with pytest.raises(ConfigurationError) as info:
        build_request(bearer, {"item_id": "1"}, secret=lambda _: "s3crét-value")
    assert "secret:ITEMS_KEY" in info.value.message and "s3crét" not in info.value.message


def test_secrets_are_looked_up_by_their_tool_secret_name() -> None:
    seen: list[str] = []

    def spy(name: str) -> str:
        seen.append(name)
        return "v-123456"

    for reference in ("secret:ITEMS_KEY", "env:DT_SECRET_ITEMS_KEY"):
        build_request(
            make_tool(auth={"type": "bearer", "secret": reference}), {"item_id": "1"}, secret=spy
        )
    assert seen == ["ITEMS_KEY", "ITEMS_KEY"]


def test_an_unreadable_secret_is_a_configuration_error() -> None:
    def unreadable(name: str) -> str:
        raise PermissionError(13, "Permission denied", f"/run/secrets/{name}")

    with pytest.raises(ConfigurationError) as info:
        build_request(make_tool(), {"item_id": "1"}, secret=unreadable)
    assert "secret:ITEMS_KEY" in info.value.message and "PermissionError" in info.value.message
