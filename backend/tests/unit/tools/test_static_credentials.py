"""A tool config never holds a literal credential: by value, by name, nested, in the URL.

Each refusal is a pydantic error located at the field, whose message says to store the value
as a tool secret and reference it as ``secret:NAME``, and which never repeats the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from dynamic_tools.tools.loader import load_file
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.static_credentials import RUN_VALUES

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
AWS = "AKIAIOSFODNN7EXAMPLE"
OPENAI = "sk-proj-4fA9xQ2mZ7pL0vB3nK8sR1tY"


def tool(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "create_item",
        "description": "Create one item",
        "api": {"method": "POST", "base_url": "https://items.example/v1", "path": "/items"},
    }
    base.update(overrides)
    return base


def refusals(data: dict[str, Any], **context: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(ValidationError) as info:
        ToolConfig.model_validate(data, context=context or None)
    text = str(info.value)
    for secret in ("hunter2", JWT, AWS, OPENAI, "Ym9iOnB3"):
        assert secret not in text  # the error's text (logs) never carries the value
    return [
        (".".join(map(str, e["loc"])), e["type"], e["msg"])
        for e in info.value.errors(include_url=False)
    ]


def assert_says_how(message: str) -> None:
    assert "secret:NAME" in message and "DT_SECRET_NAME" in message and "SECRETS_DIR" in message


@pytest.mark.parametrize(
    ("static_params", "path"),
    [
        ({"body": {"auth": {"user": "ada", "password": "hunter2"}}}, "body.auth.password"),
        ({"body": {"password": 123456}}, "body.password"),
        ({"body": {"client": {"clientSecret": "hunter2"}}}, "body.client.clientSecret"),
        ({"body": {"items": [{"note": "a"}, {"note": f"Bearer {JWT}"}]}}, "body.items.1.note"),
        ({"body": {"aws": {"id": AWS}}}, "body.aws.id"),
        ({"header": {"X-Custom": f"Bearer {JWT}"}}, "header.X-Custom"),
        ({"header": {"X-Upstream": "Basic Ym9iOnB3"}}, "header.X-Upstream"),
        ({"header": {"X-Forward": OPENAI}}, "header.X-Forward"),
        ({"query": {"v": AWS}}, "query.v"),
        ({"query": {"jwt_claims": JWT}}, "query.jwt_claims"),
        ({"header": {"Authorization": "Bearer hunter2"}}, "header.Authorization"),
        ({"query": {"api_key": "hunter2"}}, "query.api_key"),
    ],
)
def test_a_literal_credential_in_static_params_is_refused_naming_its_field(
    static_params: dict[str, Any], path: str
) -> None:
    found = refusals(tool(static_params=static_params))
    assert len(found) == 1
    where, rule, message = found[0]
    assert (where, rule) == (f"static_params.{path}", "literal_credential")
    assert_says_how(message)


def test_every_literal_credential_is_reported_at_once() -> None:
    found = refusals(
        tool(
            static_params={
                "query": {"v": AWS},
                "header": {"X-Custom": f"Bearer {JWT}"},
                "body": {"auth": {"password": "hunter2"}, "key": OPENAI},
            }
        )
    )
    assert [f[0] for f in found] == [
        "static_params.query.v",
        "static_params.header.X-Custom",
        "static_params.body.auth.password",
        "static_params.body.key",
    ]


@pytest.mark.parametrize(
    ("api", "field"),
    [
        (
            {"method": "GET", "base_url": f"https://x.example/{OPENAI}", "path": "/a"},
            "api.base_url",
        ),
        ({"method": "GET", "base_url": "https://x.example", "path": f"/keys/{AWS}"}, "api.path"),
    ],
)
def test_a_token_in_the_url_is_refused(api: dict[str, Any], field: str) -> None:
    found = refusals(tool(api=api))
    assert found[0][0] == field
    assert_says_how(found[0][2])


def test_a_basic_auth_username_is_a_name_not_a_token() -> None:
    auth = {"type": "basic", "username": JWT, "secret": "secret:PASSWORD"}
    assert refusals(tool(auth=auth))[0][0] == "auth.username"
    ToolConfig.model_validate(tool(auth={**auth, "username": "ada"}))


@pytest.mark.parametrize(
    "reference",
    [
        "secret:GOOD\n",
        "secret:GOOD\r\n",
        " secret:GOOD",
        "secret:GOOD ",
        "secret:GO\tOD",
        "secret:GOOD\x00",
        "secret:GOOD\x85",
    ],
)
def test_a_secret_reference_is_exactly_secret_name(reference: str) -> None:
    found = refusals(tool(auth={"type": "bearer", "secret": reference}))
    assert found[0][0] == "auth.secret"
    assert "exactly 'secret:NAME'" in found[0][2]
    assert ToolConfig.model_validate(tool(auth={"type": "bearer", "secret": "secret:GOOD"}))


def test_ordinary_static_values_and_parameters_named_like_credentials_are_kept() -> None:
    config = ToolConfig.model_validate(
        tool(
            parameters={  # filled by the caller, never stored: not literals
                "password": {"type": "string", "in": "body", "examples": ["hunter2"]},
                "api_key": {"type": "string", "in": "query", "default": OPENAI},
            },
            static_params={
                "header": {"Accept": "application/json", "X-Mode": "Bearer-compatible"},
                "query": {"v": 2, "format": "json"},
                "body": {
                    "model": "gpt-4o-mini",
                    "max_tokens": 256,
                    "tokenizer": "cl100k",
                    "grant_type": "client_credentials",
                    "token_type_hint": "refresh_token",
                    "options": {"password_policy": "strict", "secret": None},
                },
            },
        )
    )
    assert config.static_params.body["max_tokens"] == 256


def test_a_static_body_nested_past_the_limit_is_refused_not_recursed() -> None:
    body: Any = "plain"
    for _ in range(100):
        body = {"x": body}
    found = refusals(tool(static_params={"body": body}))
    assert found[0][1] == "literal_credential" and "deeper than 64" in found[0][2]
    assert found[0][0].startswith("static_params.body.x.x")


def test_a_rest_call_of_run_values_checks_header_names_only() -> None:
    run = {"static_params": {"header": {"X-Custom": f"Bearer {JWT}"}, "body": {"password": "pw"}}}
    ToolConfig.model_validate(tool(**run), context={RUN_VALUES: True})
    named = {"static_params": {"header": {"Authorization": "Bearer x1234567"}}}
    assert (
        refusals(tool(**named), **{RUN_VALUES: True})[0][0] == "static_params.header.Authorization"
    )


def test_a_tool_file_with_a_nested_password_is_a_load_problem_naming_the_field(
    tmp_path: Path,
) -> None:
    path = tmp_path / "login.yaml"
    path.write_text(
        yaml.safe_dump(
            tool(name="login", static_params={"body": {"auth": {"password": "hunter2"}}})
        )
    )
    result = load_file(path, display_root=tmp_path)
    assert result.tools == []
    [problem] = result.problems
    assert (problem.file, problem.tool, problem.field) == (
        "login.yaml",
        "login",
        "static_params.body.auth.password",
    )
    assert "secret:NAME" in problem.message and "hunter2" not in str(problem.to_dict())
