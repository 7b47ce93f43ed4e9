"""The fast schema check agrees with jsonschema; provider contracts on the Petstore."""

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from dynamic_tools.tools.openapi import find_provider_contracts
from dynamic_tools.tools.schema_check import check_schema, quick_valid
from tests.unit.tools.openapi.conftest import convert

VALID: list[Any] = [
    True,
    {},
    {"type": ["string", "null"], "enum": ["a", None], "examples": [1]},
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
    {"allOf": [{"required": ["x"]}], "additionalProperties": False, "x-vendor": {"any": 1}},
    {"patternProperties": {"^x-": {"type": "string"}}, "pattern": "^[a-z]+$", "format": "email"},
    {"prefixItems": [{"type": "string"}], "items": False, "minItems": 1, "uniqueItems": True},
    {"exclusiveMinimum": 0.5, "multipleOf": 0.1, "default": [1, 2], "const": None},
]
INVALID: list[Any] = [
    {"type": "file"},
    {"type": []},
    {"type": ["string", "string"]},
    {"required": True},
    {"required": ["a", "a"]},
    {"minLength": -1},
    {"maxItems": True},
    {"pattern": "("},
    {"enum": 3},
    {"allOf": []},
    {"properties": {"a": 3}},
    {"multipleOf": 0},
    {"items": {"type": "nope"}},
    {"exclusiveMinimum": True},
    {"patternProperties": {"(": {}}},
    [],
]


@pytest.mark.parametrize("schema", VALID + INVALID)
def test_the_quick_path_never_accepts_what_jsonschema_refuses(schema: Any) -> None:
    meta = Draft202012Validator(
        Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    expected_ok = meta.is_valid(schema)
    if quick_valid(schema):
        assert expected_ok
    try:
        check_schema(schema)
        ok = True
    except SchemaError:
        ok = False
    assert ok == expected_ok
    assert (schema in VALID) == ok


def test_every_generated_petstore_schema_takes_the_quick_path() -> None:
    for name in ("petstore-2.0.json", "petstore-3.0.json", "petstore-3.1.json"):
        for tool in convert(name).tools:
            schemas = [p.schema_ for p in tool.parameters.values()] + [tool.output_schema or {}]
            for schema in schemas:
                assert quick_valid(schema), (tool.name, schema)
                Draft202012Validator.check_schema(schema)


def test_petstore_provider_contracts() -> None:
    tools = convert("petstore-3.0.json").tools
    contracts = {(c.provider, c.output_field): c for c in find_provider_contracts(tools)}
    assert set(contracts) == {("findPetsByStatus", "id"), ("findPetsByTags", "id")}
    feeds = contracts[("findPetsByStatus", "id")].feeds
    assert "getPetById.petId" in feeds and "deletePet.petId" in feeds
    assert not any(f.startswith("findPetsByStatus.") for f in feeds)
    assert contracts[("findPetsByStatus", "id")].to_dict()["items_at"] == ""
    # what calling the provider needs (the provider catalog lists it)
    by_tags = contracts[("findPetsByTags", "id")].to_dict()["required_parameters"]
    assert [p["name"] for p in by_tags] == ["tags"] and by_tags[0]["schema"]["type"] == "array"


def test_wrapped_lists_and_resource_names() -> None:
    from dynamic_tools.tools.models import ToolConfig

    def tool(name: str, path: str, params: dict[str, Any], output: Any = None) -> ToolConfig:
        return ToolConfig.model_validate(
            {
                "name": name,
                "description": name,
                "api": {"method": "GET", "base_url": "https://x.io", "path": path},
                "parameters": params,
                "output_schema": output,
            }
        )

    item = {"type": "object", "properties": {"name": {"type": "string"}, "number": {}}}
    wrapped = {
        "type": "object",
        "properties": {"total": {"type": "integer"}, "items": {"type": "array", "items": item}},
    }
    tools = [
        tool("list_my_repos", "/user/repos", {}, wrapped),
        tool("list_issues", "/repos/{repo}/issues", {"repo": {"in": "path", "required": True}},
             {"type": "array", "items": item}),
        tool("get_issue", "/repos/{repo}/issues/{issue_number}",
             {"repo": {"in": "path", "required": True},
              "issue_number": {"in": "path", "required": True}}),
    ]  # fmt: skip
    found = {
        (c.provider, c.output_field, c.items_at): c.feeds for c in find_provider_contracts(tools)
    }
    assert found[("list_my_repos", "name", "items")] == ("get_issue.repo", "list_issues.repo")
    assert found[("list_issues", "number", "")] == ("get_issue.issue_number",)
