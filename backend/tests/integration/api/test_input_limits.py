"""Every input is bounded before it costs anything (issue 12, item 1).

- Body size: 413 with the limit and its setting, from ``Content-Length`` or while streaming.
- ``$ref`` bombs: refused while expanding, quickly, in bounded memory (a subprocess under
  ``RLIMIT_AS`` runs the server, so a regression cannot hurt the machine).
- Parsing and validation run off the event loop: ``/healthz`` answers while the largest
  allowed document is validated.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.hostile import largest_workflow_yaml, ref_bomb_text
from tests.support.servers import serve

BACKEND = Path(__file__).resolve().parents[3]


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(max_request_bytes=64 * 1024, max_tool_request_bytes=8 * 1024)


def _assert_too_large(answer: object, limit: int, setting: str) -> None:
    import httpx

    assert isinstance(answer, httpx.Response)
    assert answer.status_code == 413, answer.text
    body = answer.json()
    assert body["error_code"] == "request_too_large"
    assert body["context"]["limit"] == limit and body["context"]["setting"] == setting
    assert setting in body["message"]
    assert body["violations"][0]["path"] == "body"
    assert body["correlation_id"]


async def test_a_declared_length_over_the_limit_is_refused_unread(settings: Settings) -> None:
    async with app_client(create_app(settings)) as client:
        answer = await client.post(
            "/workflows/validate", json={"content": "x" * 70_000, "format": "yaml"}
        )
        _assert_too_large(answer, 64 * 1024, "MAX_REQUEST_BYTES")
        assert answer.json()["context"]["content_length"] > 64 * 1024
        fits = await client.post("/workflows/validate", json={"content": "a: 1"})
        assert fits.status_code == 200


async def test_a_streamed_body_is_counted_and_refused_past_the_limit(settings: Settings) -> None:
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: chunked
        for _ in range(100):
            sent.append(1)
            yield b"x" * 4096

    async with app_client(create_app(settings)) as client:
        answer = await client.post(
            "/workflows/validate", content=chunks(), headers={"content-type": "application/json"}
        )
    _assert_too_large(answer, 64 * 1024, "MAX_REQUEST_BYTES")
    assert "content_length" not in answer.json()["context"]
    assert len(sent) < 100  # refused while streaming, not after reading everything


async def test_a_small_streamed_body_reaches_the_route(settings: Settings) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"content": "domain: x\\n'
        yield b'workflows: {}", "format": "yaml"}'

    async with app_client(create_app(settings)) as client:
        answer = await client.post(
            "/workflows/validate", content=chunks(), headers={"content-type": "application/json"}
        )
    assert answer.status_code == 200, answer.text


async def test_tool_configs_have_their_own_smaller_limit(settings: Settings) -> None:
    tool = {
        "name": "big",
        "description": "d" * 10_000,
        "api": {"method": "GET", "base_url": "https://api.example.com", "path": "/x"},
    }
    async with app_client(create_app(settings)) as client:
        created = await client.post("/tools", json=tool)
        _assert_too_large(created, 8 * 1024, "MAX_TOOL_REQUEST_BYTES")
        replaced = await client.put("/tools/search_flights", json=tool)
        _assert_too_large(replaced, 8 * 1024, "MAX_TOOL_REQUEST_BYTES")
        assert (await client.get("/tools/big")).status_code == 404


async def test_the_mcp_endpoint_is_bounded_too(settings: Settings) -> None:
    async with app_client(create_app(settings)) as client:
        answer = await client.post(
            "/mcp",
            content=b"{" + b" " * 70_000 + b"}",
            headers={"content-type": "application/json", "accept": "application/json"},
        )
    _assert_too_large(answer, 64 * 1024, "MAX_REQUEST_BYTES")


@pytest.mark.serial  # a timing: another worker on the CPU would be measured too
async def test_healthz_answers_while_the_largest_allowed_document_is_validated(
    make_settings: Callable[..., Settings],
) -> None:
    """The one timing assertion the issue asks for: the event loop stays free.

    The document (1 MB of YAML, the most a workflow may be) takes seconds to parse and check;
    every /healthz sent meanwhile is answered, the slowest within 100 ms.
    """
    settings = make_settings(document_timeout_s=300)
    document = largest_workflow_yaml()
    async with app_client(create_app(settings)) as client:
        await client.post("/workflows/validate", json={"content": "a: 1"})  # workers started
        validation = asyncio.create_task(
            client.post("/workflows/validate", json={"content": document, "format": "yaml"})
        )
        await asyncio.sleep(0.2)  # the document is in the worker now
        latencies: list[float] = []
        while not validation.done() and len(latencies) < 40:

            async def probe() -> float:
                started = time.perf_counter()
                answer = await client.get("/healthz")
                assert answer.status_code == 200
                return time.perf_counter() - started

            latencies.extend(await asyncio.gather(probe(), probe(), probe()))
            await asyncio.sleep(0.05)
        answer = await validation
    assert answer.status_code == 200, answer.text
    assert "violations" in answer.json()
    assert len(latencies) >= 9, "the validation ended before /healthz was measured"
    assert max(latencies) < 0.1, f"slowest /healthz {max(latencies):.3f} s"


_BOMB_SERVER = """
import json, resource, sys, time
limit = 1536 * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import httpx
from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.servers import free_port, serve

settings = Settings(_env_file=None, **json.loads(sys.argv[1]))
with serve(create_app(settings), settings.port) as url:
    started = time.perf_counter()
    answer = httpx.post(
        url + "/catalogs", json={"source": "bomb.json", "name": "bomb"}, timeout=120
    )
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"status": answer.status_code, "body": answer.json(),
                      "seconds": seconds, "peak_mib": peak_mib}))
"""


def test_the_8x10_ref_bomb_is_refused_quickly_in_bounded_memory(
    make_settings: Callable[..., Settings], registry_root: Path
) -> None:
    """4 KB that inlined is 10^8 copies: it grew the server to 23 GB before the fix.

    The server runs in a subprocess whose address space is capped at 1.5 GB, so a regression
    fails this test (MemoryError, a kill) instead of hurting the machine.
    """
    bomb = ref_bomb_text(8, 10)
    assert len(bomb) < 5000
    (registry_root / "bomb.json").write_text(bomb)
    settings = make_settings()
    config = {
        k: str(v)
        for k, v in settings.model_dump().items()
        if k in ("host", "port", "data_dir", "registry_config_path")
    }
    config |= {"durable_runs": "false", "log_level": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-c", _BOMB_SERVER, json.dumps(config)],
        cwd=BACKEND,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 422, report
    violation = report["body"]["violations"][0]
    assert violation["rule"] == "max_schema_bytes"
    assert violation["expected"] == 2 * 1024 * 1024
    assert "#/components/schemas/L" in violation["message"]
    assert not (registry_root / "catalogs" / "bomb.tools.json").exists()
    assert report["peak_mib"] < 1024


async def test_serving_over_real_http_bounds_bodies_too(settings: Settings) -> None:
    import httpx

    with serve(create_app(settings), settings.port) as url:
        async with httpx.AsyncClient(base_url=url) as client:
            answer = await client.post("/tools", content=b"{" + b" " * 20_000 + b"}")
    _assert_too_large(answer, 8 * 1024, "MAX_TOOL_REQUEST_BYTES")
