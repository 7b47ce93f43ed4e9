"""Every outbound call ends at its deadline, also when the API trickles one byte at a time.

The peer (``tests/support/trickle.py``) sends a byte every 0.2 s: no read ever waits long
enough for the 30 s per-read timeout, so before, such a call (and its run) never ended. Now the
whole exchange has a deadline (``TOOL_CALL_DEADLINE_S``, a tool's ``api.deadline_s``, a node's
lower timeout) on every path: workflow runs, the single-shot pipeline and MCP tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES, TEST_API_KEY
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.mcp_client import MODERN, mcp_client
from tests.support.runs_over_http import run_to_end
from tests.support.servers import serve
from tests.support.trickle import trickling_server

TRICKLE = FIXTURES / "trickle"


@pytest.fixture(scope="module")
def trickle() -> Iterator[str]:
    with trickling_server() as url:
        yield url


@pytest.fixture
def server(
    tmp_path: Path, trickle: str, make_settings: Callable[..., Settings], fake_llm: FakeLLM
) -> Iterator[str]:
    root = tmp_path / "slow-registry"
    (root / "tools").mkdir(parents=True)
    (root / "workflows").mkdir()
    tools = (TRICKLE / "tools.yaml").read_text().replace("TRICKLE_URL", trickle)
    (root / "tools" / "slow.yaml").write_text(tools)
    (root / "workflows" / "slow_flows.yaml").write_text((TRICKLE / "slow_flows.yaml").read_text())
    settings = make_settings(
        registry_config_path=root / "config.yaml",
        allowed_target_hosts=[trickle.removeprefix("http://")],
        openai_base_url=fake_llm.base_url,
        openai_api_key=TEST_API_KEY,
        enable_demo_api=False,
        http_timeout_s=30,
        tool_call_deadline_s=1.5,
    )
    with serve(create_app(settings), port=settings.port) as url:
        yield url


def test_a_trickling_answer_fails_at_the_deadline_and_the_run_moves_on(server: str) -> None:
    run = run_to_end(server, "slow_flow")
    assert run["status"] == "failed"
    ask, other = run["nodes"]["ask"], run["nodes"]["other"]
    assert ask["status"] == "failed" and ask["attempts"] == 2  # a timeout is retried
    assert "did not finish within its 1.5 s deadline" in ask["error"]
    assert other["status"] == "failed"  # the fallback ran, and its tool's own deadline held
    assert "did not finish within its 1 s deadline" in other["error"]


def test_a_node_timeout_lower_than_the_deadline_wins(server: str) -> None:
    run = run_to_end(server, "slow_then_timeout")
    assert run["status"] == "failed"
    assert "0.5" in run["nodes"]["ask"]["error"]


def test_the_pipeline_call_ends_at_the_deadline(server: str, fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_call("slow_body", {}))
    answer = httpx.post(
        f"{server}/workflow",
        json={"user_instructions": "read the slow API", "tool_ids": ["slow_body"]},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["status"] == "error" and data["error_stage"] == "api_execution"
    assert "deadline" in json.dumps(data)


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_an_mcp_tool_call_ends_at_the_deadline(server: str, mode: str) -> None:
    async with mcp_client(server, mode=mode) as client:
        result = await client.call_tool("slow_headers", {})
    assert result.is_error
    assert "did not finish within its 1 s deadline" in json.dumps(result.model_dump(mode="json"))


async def test_a_document_fetch_ends_at_its_deadline(trickle: str) -> None:
    from dynamic_tools.errors import TransportError
    from dynamic_tools.http.document_fetch import DocumentFetcher
    from dynamic_tools.http.target_guard import TargetGuard

    async with httpx.AsyncClient(timeout=30) as client:
        fetcher = DocumentFetcher(
            client=client,
            guard=TargetGuard([trickle.removeprefix("http://")]),
            local_roots=[],
            deadline_s=1,
        )
        with pytest.raises(TransportError) as stopped:
            await fetcher.fetch(f"{trickle}/openapi.json")
    assert stopped.value.timed_out and "did not finish within 1 s" in stopped.value.message
