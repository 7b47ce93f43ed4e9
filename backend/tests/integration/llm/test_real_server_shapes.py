"""The product against servers that answer as llama.cpp, vLLM and Ollama do.

For each profile of ``tests/support/llm_servers.py`` (llama-cpp-python's default, chatml-function-
calling and gemma chat formats, vLLM with and without ``--enable-auto-tool-choice``, Ollama),
the app is served over real HTTP with the real ``openai`` client pointed at the scripted server:

- the ten travel requests (``tests/fixtures/llm/travel_requests.yaml``) through ``POST /workflow``
  select the expected tool with the expected arguments;
- MCP ``api_query`` answers a search through the same server;
- what the product sends is what every one of them accepts: ``max_tokens`` on every request,
  never ``content: null`` on an assistant message.

The oracle behind each server knows the right call; whether the product gets it depends only on
how it asks (which fields it sends, where it puts the tool list, how it reads the answer).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.demo.travel_data import OPERATIONS
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, TEST_API_KEY
from tests.support.llm_servers import (
    PROFILES,
    LLMServer,
    ProfileName,
    TravelCase,
    profile,
    running,
    travel_cases,
)
from tests.support.mcp_client import mcp_client
from tests.support.servers import free_port, serve

MODEL = "served-model"
CASES = travel_cases()
TRAVEL_TOOLS = list(OPERATIONS)


@dataclass
class Product:
    """The app (``url``) and the scripted LLM server it talks to."""

    name: ProfileName
    llm: LLMServer
    url: str


def settings_for(root: Path, llm: LLMServer | str | None, **overrides: Any) -> Settings:
    """Settings for the app: the test defaults (``tests/conftest.py``) pointed at ``llm`` (a
    scripted server, or a base URL); capabilities detected, as a user's would be."""
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": free_port(),
        "data_dir": root / "data",
        "registry_config_path": root / "registry" / "config.yaml",
        "openai_api_key": TEST_API_KEY,
        "openai_base_url": llm.base_url if isinstance(llm, LLMServer) else llm,
        "llm_model": MODEL,
        "llm_max_retries": 0,
        "log_json": True,
        "log_level": "INFO",
        "allowed_target_hosts": [],
        "api_token": None,
        "durable_runs": False,
        "freeze_startup_heap": False,
        "selection_top_k": 20,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture(scope="module", params=PROFILES)
def product(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Product]:
    """One scripted LLM server per profile and the app served against it."""
    name: ProfileName = request.param
    root = tmp_path_factory.mktemp(name.replace(":", "-"))
    registry = root / "registry"
    shutil.copytree(EXAMPLES / "tools", registry / "tools")
    shutil.copytree(EXAMPLES / "workflows", registry / "workflows")
    shutil.copytree(EXAMPLES / "markdown", registry / "markdown")
    with running(profile(name, model=MODEL)) as llm:
        settings = settings_for(root, llm)
        with serve(create_app(settings), port=settings.port) as url:
            yield Product(name, llm, url)


@pytest.fixture
def llm(product: Product) -> LLMServer:
    """The product's LLM server, its recorded requests forgotten."""
    product.llm.reset()
    return product.llm


def present(arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments a call gave (a null one counts as left out)."""
    return {k: v for k, v in (arguments or {}).items() if v is not None}


def what_the_server_said(llm: LLMServer) -> str:
    """The LLM exchanges of a failed test, short: status, request fields, answer."""
    lines = []
    for body, (status, answer) in zip(llm.requests, llm.answers, strict=False):
        fields = {k: body.get(k) for k in ("tool_choice", "max_tokens", "response_format")}
        lines.append(f"{status} {fields} -> {str(answer)[:300]}")
    return "\n".join(lines)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_travel_request_selects_the_expected_call(
    product: Product, llm: LLMServer, case: TravelCase
) -> None:
    response = httpx.post(
        f"{product.url}/workflow",
        json={"user_instructions": case.instructions, "tool_ids": TRAVEL_TOOLS},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    data = response.json()
    said = what_the_server_said(llm)
    assert data["selected_tool"] == case.tool, (data.get("error"), said)
    assert present(data["arguments"]) == case.arguments, said
    assert data["status"] == "success", (data.get("error"), said)


async def test_mcp_query_answers_a_search(product: Product, llm: LLMServer) -> None:
    case = next(c for c in CASES if c.id == "search-flights")
    async with mcp_client(product.url) as client:
        result = await client.call_tool("api_query", {"question": case.instructions})
    said = what_the_server_said(llm)
    assert not result.is_error, (result.content, said)
    data = result.structured_content
    assert data["steps"], said
    first = data["steps"][0]
    assert (first["tool"], present(first["arguments"]), first["status"]) == (
        case.tool,
        case.arguments,
        "ok",
    ), said
    assert data["answer"], said


async def test_every_request_sends_max_tokens_and_no_null_assistant_content(
    product: Product, llm: LLMServer
) -> None:
    case = next(c for c in CASES if c.id == "check-availability")
    async with mcp_client(product.url) as client:
        await client.call_tool("api_query", {"question": case.instructions})
    httpx.post(
        f"{product.url}/workflow",
        json={"user_instructions": case.instructions, "tool_ids": TRAVEL_TOOLS},
        timeout=60,
    )
    assert llm.requests, "the product never called the LLM"
    for body in llm.requests:
        assert isinstance(body.get("max_tokens"), int), body
        for message in body.get("messages", []):
            if message.get("role") == "assistant":
                assert isinstance(message.get("content"), str), message
