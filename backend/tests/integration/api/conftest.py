"""Fixtures of the REST tests that run workflows on mocked tools: a fresh registry with the
travel example, the mocks (a test changes ``tools.mocks``), and a client of the app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.engine.local import MockTools
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.mocked_runs import travel_tools


@pytest.fixture
def settings(tmp_path: Path, make_settings: Callable[..., Settings]) -> Settings:
    root = tmp_path / "fresh-registry"
    return make_settings(registry_config_path=root / "config.yaml", seed_examples_from=EXAMPLES)


@pytest.fixture
def tools() -> MockTools:
    return travel_tools()


@pytest.fixture
async def client(settings: Settings, tools: MockTools) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(create_app(settings, tool_runner=tools)) as api:
        yield api
