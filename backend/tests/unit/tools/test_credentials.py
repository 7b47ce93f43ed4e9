"""Tool secrets live in their own namespace; literal credentials are recognised by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynamic_tools.settings import Settings
from dynamic_tools.tools.credentials import looks_like_credential, secret_name
from dynamic_tools.tools.openapi import convert_document


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_a_tool_secret_is_read_from_its_own_variable_never_a_server_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("API_TOKEN", "server-token")
    monkeypatch.setenv("OPENAI_API_KEY", "llm-key")
    config = settings()
    assert config.secret("API_TOKEN") is None
    assert config.secret("OPENAI_API_KEY") is None
    monkeypatch.setenv("DT_SECRET_API_TOKEN", "tool-token")
    assert config.secret("API_TOKEN") == "tool-token"


def test_a_secrets_directory_is_read_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "WEATHER_KEY").write_text("from-file\n")
    monkeypatch.setenv("DT_SECRET_WEATHER_KEY", "from-env")
    monkeypatch.setenv("DT_SECRET_OTHER", "other-from-env")
    config = settings(secrets_dir=tmp_path)
    assert config.secret("WEATHER_KEY") == "from-file"
    assert config.secret("OTHER") == "other-from-env"


@pytest.mark.parametrize("name", ["../etc/passwd", "etc/passwd", "", "WITH SPACE", "x" * 200])
def test_names_outside_the_grammar_read_nothing(name: str, tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root:x:0:0")
    (tmp_path / "secrets").mkdir()
    assert settings(secrets_dir=tmp_path / "secrets").secret(name) is None
    assert settings(secrets_dir=tmp_path).secret(name) is None


def test_references_name_tool_secrets_only() -> None:
    assert secret_name("secret:WEATHER_KEY") == "WEATHER_KEY"
    assert secret_name("env:DT_SECRET_WEATHER_KEY") == "WEATHER_KEY"
    for reference in ("env:API_TOKEN", "env:DT_SECRET_", "sk-live-1", "secret:", "secret:a-b"):
        with pytest.raises(ValueError):
            secret_name(reference)


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("Authorization", True),
        ("X-API-Key", True),
        ("Ocp-Apim-Subscription-Key", True),
        ("x-amz-security-token", True),
        ("client_secret", True),
        ("PASSWORD", True),
        ("key", True),
        ("Accept", False),
        ("currency", False),
        ("X-Request-Id", False),
        ("sort", False),
    ],
)
def test_credential_names(name: str, credential: bool) -> None:
    assert looks_like_credential(name) is credential


def test_openapi_servers_with_credentials_give_no_tool_and_no_password() -> None:
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://bob:hunter22secret@api.example.com/v1"}],
        "paths": {"/items": {"get": {"operationId": "list", "responses": {}}}},
    }
    result = convert_document(doc)
    assert result.tools == []
    problems = [*result.violations, *result.warnings]
    assert any("credentials" in p.message for p in problems), problems
    assert "hunter22" not in str([p.message for p in problems])


@pytest.mark.parametrize(
    "reference",
    ["secret:GOOD\n", "secret:GOOD\r", " secret:GOOD", "secret:GOOD ", "env:DT_SECRET_GOOD\n"],
)
def test_a_reference_is_exactly_secret_name_with_nothing_around_it(reference: str) -> None:
    with pytest.raises(ValueError, match="exactly 'secret:NAME'"):
        secret_name(reference)
    assert secret_name(reference.strip()) == "GOOD"
