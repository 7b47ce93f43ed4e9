"""A live server with the travel example's tools and workflows, for real MCP clients."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, TEST_API_KEY
from tests.support.fake_llm import FakeLLM
from tests.support.graphql_api import GraphQLApi, running_graphql_api
from tests.support.servers import serve


@pytest.fixture
def travel_root(registry_root: Path) -> Path:
    """The registry root with the travel workflows beside the tools."""
    shutil.copytree(EXAMPLES / "workflows", registry_root / "workflows")
    shutil.copytree(EXAMPLES / "markdown", registry_root / "markdown")
    return registry_root


@pytest.fixture
def start_server(
    make_settings: Callable[..., Settings], fake_llm: FakeLLM, travel_root: Path
) -> Iterator[Callable[..., str]]:
    """Start a server (settings overridable); yields a function returning its base URL."""
    stack: list[Any] = []

    def start(**overrides: Any) -> str:
        values: dict[str, Any] = {
            "openai_base_url": fake_llm.base_url,
            "openai_api_key": TEST_API_KEY,
        }
        values.update(overrides)
        settings = make_settings(**values)
        context = serve(create_app(settings), port=settings.port)
        url = context.__enter__()
        stack.append(context)
        return url

    yield start
    for context in reversed(stack):
        context.__exit__(None, None, None)


@pytest.fixture
def server(start_server: Callable[..., str]) -> str:
    """A server with the defaults: registry tools, travel workflows, hints on."""
    return start_server()


@pytest.fixture
def graph() -> Iterator[GraphQLApi]:
    """A real GraphQL server on loopback (``tests/support/graphql_api.py``)."""
    with running_graphql_api() as api:
        yield api


@pytest.fixture
def graph_gateway(start_server: Callable[..., str], graph: GraphQLApi) -> str:
    """Our server, allowed to reach the GraphQL server."""
    return start_server(allowed_target_hosts=[graph.host])
