import socket
from pathlib import Path

import pytest
from pydantic import ValidationError

from dynamic_tools.settings import Settings


def test_runtime_directory_rules(tmp_path: Path) -> None:
    s = Settings(_env_file=None, registry_config_path=tmp_path / "reg" / "config.yaml")  # type: ignore[call-arg]
    assert s.registry_root == tmp_path / "reg"
    assert s.tools_dir == tmp_path / "reg" / "tools"
    assert s.workflows_dir == tmp_path / "reg" / "workflows"
    s = Settings(
        _env_file=None,
        registry_config_path=tmp_path / "c.yaml",  # type: ignore[call-arg]
        registry_workflows_path=tmp_path / "wf",
    )
    assert s.workflows_dir == tmp_path / "wf"


def test_environment_is_read_and_hosts_are_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_TARGET_HOSTS", "API.internal, 10.0.0.5:8080,,")
    monkeypatch.setenv("PORT", "9001")
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.allowed_target_hosts == ["api.internal", "10.0.0.5:8080"]
    assert s.base_url == "http://127.0.0.1:9001"
    assert s.openai_base_url is None and not s.llm_configured


def test_bad_values_are_reported_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "eighty")
    with pytest.raises(ValueError, match="port"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_the_journal_is_derived_from_the_run_store_url(tmp_path: Path) -> None:
    pg = Settings(_env_file=None, database_url="postgresql+psycopg://u@db:5432/app")  # type: ignore[call-arg]
    assert pg.durable_database_url == "postgresql://u@db:5432/app"
    short = Settings(_env_file=None, database_url="postgres://u@db/app")  # type: ignore[call-arg]
    assert short.durable_database_url == "postgresql://u@db/app"
    lite = Settings(_env_file=None, data_dir=tmp_path, port=8123)  # type: ignore[call-arg]
    assert lite.durable_database_url == f"sqlite:///{tmp_path / 'dynamic_tools.journal.sqlite'}"
    own = Settings(_env_file=None, data_dir=tmp_path, database_url=f"sqlite:///{tmp_path}/p/x.db")  # type: ignore[call-arg]
    assert own.durable_database_url == f"sqlite:///{tmp_path}/p/x.journal.db"  # beside the store
    memory = Settings(_env_file=None, database_url="sqlite://")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="need a SQLite file"):
        _ = memory.durable_database_url


def test_the_default_executor_id_does_not_depend_on_the_port() -> None:
    one = Settings(_env_file=None, port=8123)  # type: ignore[call-arg]
    other = Settings(_env_file=None, port=9000, host="0.0.0.0")  # type: ignore[call-arg]
    assert one.effective_executor_id == other.effective_executor_id == socket.gethostname()
    named = Settings(_env_file=None, executor_id=" pod-0 ")  # type: ignore[call-arg]
    assert named.effective_executor_id == "pod-0"


def test_a_blank_key_or_token_is_no_key_or_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.setenv("API_TOKEN", "  ")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.openai_api_key is None and settings.api_token is None
    assert not settings.llm_configured


def test_path_settings_expand_home_and_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DT_PROJECT", "travel")
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        registry_workflows_path="~/wf",
        registry_config_path="$HOME/${DT_PROJECT}/config.yaml",
        data_dir="~/data",
        database_url="sqlite:///~/runs.sqlite",
    )
    assert settings.registry_workflows_path == tmp_path / "wf"
    assert settings.registry_config_path == tmp_path / "travel" / "config.yaml"
    assert settings.data_dir == tmp_path / "data"
    assert settings.database_url == f"sqlite:///{tmp_path}/runs.sqlite"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("registry_workflows_path", "$DT_NOT_SET_ANYWHERE/wf", "$DT_NOT_SET_ANYWHERE"),
        ("data_dir", "${DT_NOT_SET_ANYWHERE}", "${DT_NOT_SET_ANYWHERE}"),
        ("seed_examples_from", "~nosuchuser-dt/x", "home directory that does not exist"),
        ("registry_config_path", "a\x00b", "NUL"),
    ],
)
def test_a_path_that_cannot_be_expanded_is_refused_naming_the_setting(
    field: str, value: str, said: str
) -> None:
    with pytest.raises(ValueError) as refused:
        Settings(_env_file=None, **{field: value})  # type: ignore[arg-type]
    assert field in str(refused.value) and said in str(refused.value)


@pytest.mark.parametrize(
    ("token", "demo", "access_control", "enabled"),
    [
        (None, None, False, True),  # make run: no access control, the demo is on
        ("tok-7f3a9c01", None, True, False),  # auto: a token switches the demo off
        ("tok-7f3a9c01", "true", True, True),  # asked for: on, behind the token
        (None, "false", False, False),
        ("tok-7f3a9c01", "auto", True, False),
        (None, "", False, True),  # blank is auto
    ],
)
def test_the_demo_api_is_on_by_default_only_without_access_control(
    monkeypatch: pytest.MonkeyPatch,
    token: str | None,
    demo: str | None,
    access_control: bool,
    enabled: bool,
) -> None:
    for name, value in (("API_TOKEN", token), ("ENABLE_DEMO_API", demo)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.access_control_configured is access_control
    assert settings.demo_api_enabled is enabled


def test_a_tool_secret_name_with_a_line_break_reads_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DT_SECRET_GOOD", "value-1")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.secret("GOOD") == "value-1"
    assert settings.secret("GOOD\n") is None


def test_an_issuer_turns_access_control_on_and_names_the_resource_uris(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("API_TOKEN", raising=False)
    monkeypatch.delenv("OAUTH_AUDIENCE", raising=False)
    monkeypatch.setenv("OAUTH_ISSUER", "https://login.example.com/realms/dt")
    monkeypatch.setenv("PUBLIC_BASE_URL", "https://tools.example.com/")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.access_control_configured and not settings.demo_api_enabled
    assert settings.oauth_audiences == [
        "https://tools.example.com",
        "https://tools.example.com/mcp",
    ]
    monkeypatch.setenv("OAUTH_AUDIENCE", "api://dynamic-tools, https://tools.example.com")
    listed = Settings(_env_file=None)  # type: ignore[call-arg]
    assert listed.oauth_audiences == ["api://dynamic-tools", "https://tools.example.com"]


@pytest.mark.parametrize(
    ("variables", "said"),
    [
        ({"OAUTH_ISSUER": "login.example.com"}, "OAUTH_ISSUER 'login.example.com' is not an http"),
        ({"OAUTH_ISSUER": "https://as.example/?tenant=1"}, "must have no query"),
        ({"OAUTH_JWKS_URL": "ftp://as.example/jwks"}, "OAUTH_JWKS_URL"),
        ({"OAUTH_ISSUER": "https://user:pw@as.example"}, "must not carry credentials"),
        (
            {"OAUTH_ISSUER": "https://as.example", "OAUTH_CLIENT_ID": "dt"},
            "OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET go together",
        ),
        (
            {"OAUTH_CLIENT_ID": "dt", "OAUTH_CLIENT_SECRET": "s3cret-value"},
            "set it too",
        ),
    ],
)
def test_bad_oauth_settings_are_refused_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], said: str
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as refused:
        Settings(_env_file=None)  # type: ignore[call-arg]
    messages = " ".join(str(e["msg"]) for e in refused.value.errors())  # what the CLI prints
    assert said in messages
    assert "s3cret-value" not in messages and "pw@" not in messages
