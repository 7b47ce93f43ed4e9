"""Shared fixtures: settings on temporary directories, the fake LLM, live servers."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.settings import Settings
from tests.support.fake_llm import FakeLLM, running_fake_llm
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "travel"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEST_API_KEY = "sk-test-LLMKEY-5f2b9c71e0d4"


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLLM]:
    with running_fake_llm() as fake:
        yield fake


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLM) -> Iterator[FakeLLM]:
    """The scripted fake LLM, emptied before and after each test."""
    _fake_llm_server.reset()
    yield _fake_llm_server
    _fake_llm_server.reset()


@pytest.fixture
def registry_root(tmp_path: Path) -> Path:
    """A registry root holding a copy of the travel example's tools."""
    root = tmp_path / "registry"
    shutil.copytree(EXAMPLES / "tools", root / "tools")
    return root


@pytest.fixture
def make_settings(tmp_path: Path, registry_root: Path) -> Callable[..., Settings]:
    """Settings on temporary directories, never reading a .env file."""

    def factory(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": free_port(),
            "data_dir": tmp_path / "data",
            "registry_config_path": registry_root / "config.yaml",
            "openai_api_key": None,
            "openai_base_url": None,
            "llm_model": "fake-model",
            "llm_max_retries": 0,
            "log_json": True,
            "log_level": "INFO",
            "allowed_target_hosts": [],
            "api_token": None,
            "durable_runs": False,  # DBOS is one per process: durable tests opt in
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    return factory
