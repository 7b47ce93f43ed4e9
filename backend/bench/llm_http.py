"""The product over HTTP against the same model server: ``POST /workflow`` and MCP ``api_query``.

Part of ``make bench-llm`` (``bench/llm.py``): the app is served on loopback the way ``make run``
serves it (the travel example, its demo API answering the tools), its ``OPENAI_BASE_URL`` the
model server, and asked as a user would: the first travel requests through ``POST /workflow``,
then the same through MCP ``api_query`` with the ``mcp`` SDK client in its default revision
(2026-07-28). Per request: the outcome (a validated call, or the error and its stage; for
``api_query`` the answer or why it stopped, and its steps), the LLM calls and tokens, the seconds,
and whether it ended within its configured time (``LLM_TIMEOUT_S`` per LLM request for the
pipeline; ``QUERY_TIME_BUDGET_S`` for ``api_query``).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.mcp_client import MODERN, mcp_client
from tests.support.servers import free_port, serve

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "travel"
QUERY_BUDGET_S = 120.0


@dataclass
class HttpResult:
    """What one request over HTTP did."""

    id: str
    path: str  # "POST /workflow" or "api_query"
    outcome: str  # "call <tool>", "error at <stage>", "answer", "stopped: <reason>"
    detail: str
    llm_calls: int
    tokens: int
    seconds: float
    in_time: bool


def settings_for(
    root: Path, base_url: str, model: str, api_key: str, timeout_s: float, capabilities: str
) -> Settings:
    """The app's settings: ``make run``'s travel example against the model server."""
    registry = root / "registry"
    shutil.copytree(EXAMPLE / "tools", registry / "tools")
    port = free_port()
    return Settings(  # type: ignore[call-arg]
        _env_file=None, host="127.0.0.1", port=port, data_dir=root / "data",
        registry_config_path=registry / "config.yaml", seed_examples_from=None,
        openai_api_key=api_key, openai_base_url=base_url, llm_model=model,
        llm_timeout_s=timeout_s, llm_max_retries=0, query_time_budget_s=QUERY_BUDGET_S,
        llm_capabilities=capabilities,
        durable_runs=False, enable_demo_api=True, log_level="WARNING", log_json=True,
    )  # fmt: skip


def run_over_http(
    base_url: str,
    model: str,
    api_key: str,
    timeout_s: float,
    requests: list[tuple[str, str]],
    tool_ids: list[str],
    capabilities: str = "detect",
) -> list[HttpResult]:
    """Each ``(id, instructions)`` through ``POST /workflow``, then through ``api_query``."""
    results: list[HttpResult] = []
    with tempfile.TemporaryDirectory(prefix="bench-llm-http-") as tmp:
        settings = settings_for(Path(tmp), base_url, model, api_key, timeout_s, capabilities)
        with serve(create_app(settings), port=settings.port) as url:
            for item, instructions in requests:
                results.append(_workflow(url, item, instructions, tool_ids, timeout_s))
            for item, instructions in requests:
                results.append(asyncio.run(_query(url, item, instructions)))
    return results


def _workflow(
    url: str, item: str, instructions: str, tool_ids: list[str], timeout_s: float
) -> HttpResult:
    started = time.perf_counter()
    answer = httpx.post(
        f"{url}/workflow",
        json={"user_instructions": instructions, "tool_ids": tool_ids},
        timeout=timeout_s * 10,
    )
    seconds = time.perf_counter() - started
    data: dict[str, Any] = answer.json()
    usage = data.get("usage") or {}
    calls = int(usage.get("llm_calls") or 0)
    if data.get("selected_tool"):
        outcome = f"call {data['selected_tool']}"
        detail = str(data.get("arguments"))
    else:
        outcome = f"error at {data.get('error_stage')}"
        detail = str(data.get("error"))
    return HttpResult(
        item, "POST /workflow", outcome, detail[:160], calls, int(usage.get("total_tokens") or 0),
        round(seconds, 1), answer.status_code == 200 and seconds <= timeout_s * max(calls, 1) + 5,
    )  # fmt: skip


async def _query(url: str, item: str, question: str) -> HttpResult:
    started = time.perf_counter()
    async with mcp_client(url, mode=MODERN) as client:
        result = await client.call_tool("api_query", {"question": question})
    seconds = time.perf_counter() - started
    data: dict[str, Any] = dict(result.structured_content or {})
    usage = data.get("usage") or {}
    steps = data.get("steps") or []
    if data.get("answer"):
        outcome = "answer"
    elif data.get("stopped"):
        outcome = f"stopped: {data['stopped']}"
    else:
        outcome = "error" if result.is_error else "no answer"
    said = [f"{s.get('tool')}:{s.get('status')}" for s in steps]
    detail = f"steps {said} " + str(data.get("answer") or data.get("message") or "")
    return HttpResult(
        item, "api_query", outcome, detail[:160], int(usage.get("llm_calls") or 0),
        int(usage.get("total_tokens") or 0), round(seconds, 1), seconds <= QUERY_BUDGET_S + 5,
    )  # fmt: skip


def report(results: list[HttpResult]) -> None:
    """One line per request, then how many ended with a call or a named error in time."""
    print("\nover HTTP: POST /workflow, then MCP api_query (the SDK client, 2026-07-28)")
    print("{:<28} {:<15} {:<36} {:>5} {:>7} {:>7} {:>7}".format(
        "id", "path", "outcome", "calls", "tokens", "s", "in time"))  # fmt: skip
    for r in results:
        print(f"{r.id:<28} {r.path:<15} {r.outcome[:36]:<36} {r.llm_calls:>5} {r.tokens:>7} "
              f"{r.seconds:>7.1f} {'yes' if r.in_time else 'NO':>7}")  # fmt: skip
        print(f"    {r.detail}")
    late = [r for r in results if not r.in_time]
    print(f"{len(results) - len(late)}/{len(results)} ended within their configured time")
