from pathlib import Path

import pytest

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


def test_durable_runs_share_postgres_or_use_their_own_sqlite_file(tmp_path: Path) -> None:
    pg = Settings(_env_file=None, database_url="postgresql+psycopg://u@db:5432/app")  # type: ignore[call-arg]
    assert pg.durable_database_url == "postgresql://u@db:5432/app"
    short = Settings(_env_file=None, database_url="postgres://u@db/app")  # type: ignore[call-arg]
    assert short.durable_database_url == "postgresql://u@db/app"
    lite = Settings(_env_file=None, data_dir=tmp_path, port=8123)  # type: ignore[call-arg]
    assert lite.durable_database_url == f"sqlite:///{tmp_path / 'runs_dbos.sqlite'}"
    assert lite.effective_executor_id.endswith("-8123")
