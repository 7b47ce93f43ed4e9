"""Hostile input over MCP: tool errors naming the field and the limit, never an internal error.

The ``$ref`` bomb runs in a subprocess under ``RLIMIT_AS`` (1.5 GB), server and client both,
so a regression cannot take the machine's memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.hostile import nested_json, nested_object_json, ref_bomb_text
from tests.support.mcp_client import call, mcp_client

BACKEND = Path(__file__).resolve().parents[3]


async def test_catalog_sources_that_are_not_paths_or_urls_are_tool_errors(
    server: str, travel_root: Path
) -> None:
    (travel_root / "deep.json").write_text(nested_object_json(10_000))
    async with mcp_client(server) as client:
        for source, rule in (
            ("~nosuchuser/x.json", "invalid_path"),
            ("a\u0000b", "invalid_characters"),
            ("http://127.0.0.1:1:2/openapi.json", "invalid_url"),
        ):
            refused = await call(client, "catalog.import_openapi", source=source, catalog="x")
            assert refused["is_error"] and refused["category"] == "validation", refused
            assert refused["violations"][0]["path"] == "source"
            assert refused["violations"][0]["rule"] == rule
        deep = await call(client, "catalog.validate_openapi", source="deep.json")
        assert deep["valid"] is False and deep["violations"][0]["rule"] == "max_depth"


async def test_workflow_documents_nested_too_deep_are_violations(server: str) -> None:
    async with mcp_client(server) as client:
        for content, fmt in ((nested_json(10_000), "json"), (nested_json(10_000), "yaml")):
            checked = await call(client, "workflow.validate", content=content, format=fmt)
            assert not checked["is_error"] and checked["valid"] is False, checked
            assert checked["errors"][0]["rule"] == "max_depth"
            saved = await call(client, "workflow.save", content=content, format=fmt)
            assert saved["is_error"] and saved["violations"][0]["rule"] == "max_depth"


async def test_purging_history_with_an_absurd_age_is_a_tool_error(server: str) -> None:
    async with mcp_client(server) as client:
        result = await client.call_tool("workflow.purge_history", {"older_than_days": 1e9})
    assert result.is_error
    text = json.dumps(result.structured_content or {}) + str(result.content)
    assert "older_than_days" in text


def _pythonpath() -> str:
    """This process's PYTHONPATH (the code under test) plus the backend (for ``tests``)."""
    return os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(BACKEND)) if p)


_BOMB_OVER_MCP = """
import asyncio, json, resource, sys, time
limit = 1536 * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.mcp_client import call, mcp_client
from tests.support.servers import serve

async def main(url):
    async with mcp_client(url) as client:
        started = time.perf_counter()
        answer = await call(client, "catalog.import_openapi", source="bomb.json", catalog="bomb")
        return answer, time.perf_counter() - started

if __name__ == "__main__":
    settings = Settings(_env_file=None, **json.loads(sys.argv[1]))
    with serve(create_app(settings), settings.port) as url:
        answer, seconds = asyncio.run(main(url))
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"answer": answer, "seconds": seconds, "peak_mib": peak_mib}))
"""


def test_the_ref_bomb_through_catalog_import_openapi_is_refused_in_bounded_memory(
    registry_root: Path, make_settings: object, tmp_path: Path
) -> None:
    (registry_root / "bomb.json").write_text(ref_bomb_text(8, 10))
    settings = make_settings()  # type: ignore[operator]
    config = {
        k: str(v)
        for k, v in settings.model_dump().items()
        if k in ("host", "port", "data_dir", "registry_config_path")
    }
    config |= {"durable_runs": "false", "log_level": "WARNING"}
    script = tmp_path / "bomb_over_mcp.py"
    script.write_text(_BOMB_OVER_MCP)
    done = subprocess.run(
        [sys.executable, str(script), json.dumps(config)],
        cwd=BACKEND,
        env={**os.environ, "PYTHONPATH": _pythonpath()},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    answer = report["answer"]
    assert answer["is_error"] and answer["category"] == "validation", answer
    assert answer["violations"][0]["rule"] == "max_schema_bytes"
    assert answer["violations"][0]["expected"] == 2 * 1024 * 1024
    assert not (registry_root / "catalogs" / "bomb.tools.json").exists()
    assert report["peak_mib"] < 1024


async def test_a_markdown_workflow_path_the_os_cannot_take_is_file_not_found(
    server: str,
) -> None:
    async with mcp_client(server) as client:
        for path in ("a\u0000b.md", "x" * 5000 + ".md"):
            answer = await call(client, "load_workflow", path=path)
            assert answer["is_error"], answer
            assert answer["error_code"] == "FILE_NOT_FOUND", answer
