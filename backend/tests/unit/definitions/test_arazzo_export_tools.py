"""An Arazzo export's OpenAPI description keeps what the tools had: servers, auth (the same
``secret:NAME`` references once imported again), static params; what OpenAPI cannot say is a
warning with its path. Checked by importing the export (as an OpenAPI catalog, and as the
Arazzo document's source) and building the requests both tools would send."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from dynamic_tools.definitions.arazzo.convert import convert_arazzo
from dynamic_tools.definitions.arazzo.export import export_arazzo
from dynamic_tools.definitions.arazzo.export_openapi import openapi_of
from dynamic_tools.definitions.arazzo.validation import check_arazzo
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.http.request_builder import build_request
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.openapi import ConversionOptions, convert_document

SECRETS = {"PETS_TOKEN": "pets-value-1", "WEATHER_KEY": "weather-value-2", "DB_PASS": "pw-3"}


def _tool(name: str, **data: Any) -> ToolConfig:
    return ToolConfig.model_validate({"name": name, "description": f"The {name} call", **data})


TOOLS = {
    t.name: t
    for t in (
        _tool(
            "list_pets",
            api={"method": "GET", "base_url": "https://pets.example.com/v1", "path": "/pets"},
            parameters={"kind": {"type": "string", "in": "query"}},
            static_params={"query": {"page_size": 50, "lang": "en"}, "header": {"X-Mode": "a"}},
            auth={"type": "bearer", "secret": "secret:PETS_TOKEN"},
        ),
        _tool(
            "add_visit",
            api={
                "method": "POST",
                "base_url": "https://pets.example.com/v1",
                "path": "/pets/{id}/visits",
            },
            parameters={
                "id": {"type": "string", "in": "path", "required": True},
                "note": {"type": "string", "in": "body", "required": True},
            },
            static_params={"body": {"source": "export", "level": 2}},
            auth={"type": "bearer", "secret": "secret:PETS_TOKEN"},
        ),
        _tool(
            "forecast",
            api={"method": "GET", "base_url": "https://weather.example.com", "path": "/f"},
            parameters={"city": {"type": "string", "in": "query", "required": True}},
            auth={
                "type": "api_key",
                "in": "query",
                "name": "appid",
                "secret": "secret:WEATHER_KEY",
            },
        ),
        _tool(
            "report",
            api={"method": "PUT", "base_url": "https://db.example.com", "path": "/r"},
            parameters={"text": {"type": "string", "in": "body"}},
            auth={"type": "basic", "username": "ada", "secret": "secret:DB_PASS"},
        ),
    )
}

WORKFLOW = """
workflows:
  visit:
    params:
      kind: { type: str, required: true }
      city: { type: str, required: true }
    graph:
      pets:
        call: list_pets
        args: { kind: $kind }
        output: pets
      visit:
        call: add_visit
        depends_on: [pets]
        args: { id: $pets.0.id, note: "visit of {$kind}" }
      weather:
        call: forecast
        depends_on: [visit]
        args: { city: $city }
      report:
        call: report
        depends_on: [weather]
        args: { text: done }
"""


def _export() -> Any:
    document = load_document(WORKFLOW, name="visit.yaml").document
    return export_arazzo("visit", document.workflows, TOOLS.get)


def _request(tool: ToolConfig, args: dict[str, Any]) -> dict[str, Any]:
    built = build_request(tool, args, secret=SECRETS.get)
    return {
        "method": built.method,
        "url": built.url,
        "query": built.query,
        "headers": built.headers,
        "body": built.body,
    }


def test_auth_becomes_security_schemes_naming_the_same_secrets() -> None:
    export = _export()
    schemes = export.openapi["components"]["securitySchemes"]
    assert schemes == {
        "bearer_PETS_TOKEN": {
            "type": "http",
            "scheme": "bearer",
            "x-dynamic-tools-secret": "PETS_TOKEN",
        },
        "api_key_WEATHER_KEY": {
            "type": "apiKey",
            "in": "query",
            "name": "appid",
            "x-dynamic-tools-secret": "WEATHER_KEY",
        },
        "basic_DB_PASS": {
            "type": "http",
            "scheme": "basic",
            "x-dynamic-tools-secret": "DB_PASS",
            "x-dynamic-tools-username": "ada",
        },
    }
    text = yaml.safe_dump(export.openapi)
    assert not any(value in text for value in SECRETS.values())
    paths = export.openapi["paths"]
    assert paths["/pets"]["get"]["security"] == [{"bearer_PETS_TOKEN": []}]
    assert paths["/f"]["get"]["security"] == [{"api_key_WEATHER_KEY": []}]
    # three base URLs: each operation has its own server, none at the top
    assert "servers" not in export.openapi
    assert paths["/f"]["get"]["servers"] == [{"url": "https://weather.example.com"}]


def test_what_openapi_cannot_say_is_a_warning_with_its_path() -> None:
    warnings = {(w["path"], w["rule"]) for w in _export().warnings}
    assert ("tools.report.auth.username", "basic_auth_username") in warnings
    unresolved = _tool(
        "templated",
        api={"method": "GET", "base_url": "${API_HOST}/x", "path": "/t"},
        static_params={"header": {"Accept": "text/csv"}},
        parameters={"lang": {"type": "string", "in": "query"}},
    ).model_copy()
    clash = unresolved.model_copy(
        update={
            "static_params": unresolved.static_params.model_copy(update={"query": {"lang": "en"}})
        }
    )
    document = load_document(
        "workflows:\n  t:\n    graph:\n      a: { call: templated }\n", name="t.yaml"
    ).document
    export = export_arazzo("t", document.workflows, {"templated": clash}.get)
    found = {(w["path"], w["rule"]) for w in export.warnings}
    assert ("tools.templated.api.base_url", "base_url_variable") in found
    assert ("tools.templated.static_params.header.Accept", "static_param_ignored") in found
    assert ("tools.templated.static_params.query.lang", "static_param_clash") in found
    assert export.openapi["servers"] == [
        {
            "url": "{API_HOST}/x",
            "variables": {"API_HOST": {"default": "", "description": "${API_HOST}"}},
        }
    ]


def test_the_exported_openapi_imports_as_tools_that_send_the_same_requests() -> None:
    export = _export()
    result = convert_document(export.openapi, ConversionOptions(catalog="rt"))
    assert result.valid, result.violations
    again = {t.name: t for t in result.tools}
    for name, tool in TOOLS.items():
        assert again[name].auth == tool.auth, name
        assert again[name].api.base_url == tool.api.base_url
    # the document names its secrets: the import says so (its preview shows it)
    assert "named_secret" in {w.rule for w in result.warnings}
    calls = {
        "list_pets": {"kind": "cat"},
        "add_visit": {"id": "P1", "note": "hi"},
        "forecast": {"city": "Lisbon"},
        "report": {"text": "done"},
    }
    for name, args in calls.items():
        static = {
            **TOOLS[name].static_params.query,
            **TOOLS[name].static_params.header,
            **TOOLS[name].static_params.body,
        }
        assert _request(again[name], {**static, **args}) == _request(TOOLS[name], args), name


def test_the_exported_arazzo_document_imports_with_the_same_secrets_and_static_values() -> None:
    export = _export()
    text = yaml.safe_dump(export.arazzo, sort_keys=False)
    assert check_arazzo(text, name="visit.arazzo.yaml", sources={"tools": export.openapi}).valid
    imported = convert_arazzo(export.arazzo, {"tools": export.openapi}, catalog="rt")
    assert not imported.errors, imported.errors
    auth = {t.name.removeprefix("rt_"): t.auth for t in imported.tools}
    assert auth == {name: tool.auth for name, tool in TOOLS.items()}
    graph = imported.document["workflows"]["visit"]["graph"]
    assert graph["pets"]["args"] == {"page_size": 50, "lang": "en", "X-Mode": "a", "kind": "$kind"}
    assert graph["visit"]["args"]["source"] == "export" and graph["visit"]["args"]["level"] == 2


@pytest.mark.parametrize("username", [None, "ghp_" + "a" * 36])
def test_a_basic_scheme_without_a_plain_user_name_is_not_mapped(username: str | None) -> None:
    scheme: dict[str, Any] = {"type": "http", "scheme": "basic", "x-dynamic-tools-secret": "X"}
    if username:
        scheme["x-dynamic-tools-username"] = username
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://a.example.com"}],
        "components": {"securitySchemes": {"b": scheme}},
        "paths": {"/x": {"get": {"operationId": "x", "security": [{"b": []}], "responses": {}}}},
    }
    result = convert_document(document, ConversionOptions(catalog="c"))
    assert result.tools[0].auth.type == "none"
    assert "unsupported_security" in {w.rule for w in result.warnings}
    assert not username or username not in str([w.message for w in result.warnings])


def test_a_secret_name_that_is_not_one_falls_back_to_the_catalogs() -> None:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://a.example.com"}],
        "components": {
            "securitySchemes": {
                "b": {"type": "http", "scheme": "bearer", "x-dynamic-tools-secret": "a b"}
            }
        },
        "paths": {"/x": {"get": {"operationId": "x", "security": [{"b": []}], "responses": {}}}},
    }
    result = convert_document(document, ConversionOptions(catalog="c"))
    assert result.tools[0].auth.secret == "secret:C_TOKEN"
    assert "invalid_secret_name" in {w.rule for w in result.warnings}


def test_two_tools_on_one_method_and_path_and_how_a_tool_calls_are_warnings() -> None:
    api = {"method": "POST", "base_url": "https://a.example.com", "path": "/graphql"}
    first = _tool("first", api={**api, "deadline_s": 5}, hints={"category": "search"})
    second = _tool(
        "second",
        api={**api, "base_url": "https://b.example.com"},
        parameters={"id": {"type": "string", "in": "body"}},
        graphql={"document": "query($id: ID) { node(id: $id) { id } }"},
    )
    found: list[tuple[str, str]] = []
    document = openapi_of([first, second], "t", lambda path, rule, _: found.append((path, rule)))
    assert found == [
        ("tools.first.api.deadline_s", "deadline"),
        ("tools.second", "operation_clash"),
    ]
    assert document["paths"]["/graphql"]["post"]["operationId"] == "first"
    assert document["paths"]["/graphql"]["post"]["tags"] == ["search"]  # read back as category
    alone: list[str] = []
    openapi_of([second], "t", lambda path, rule, _: alone.append(rule))
    assert alone == ["graphql_call"]


def test_triggers_are_a_warning_of_the_export() -> None:
    text = WORKFLOW.replace(
        "    graph:\n",
        "    triggers:\n      - schedule: daily\n        cron: '0 6 * * *'\n"
        "        params: {kind: dog, city: Paris}\n    graph:\n",
        1,
    )
    document = load_document(text, name="visit.yaml").document
    assert document.workflows["visit"].triggers
    export = export_arazzo("visit", document.workflows, TOOLS.get)
    warned = [w for w in export.warnings if "triggers" in w["message"]]
    assert warned and "schedule 'daily'" in warned[0]["message"]
    assert warned[0]["path"] == "workflows.visit"
