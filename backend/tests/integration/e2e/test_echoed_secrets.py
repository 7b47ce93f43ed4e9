"""No credential is recorded or shown in clear, also when the API echoes it back.

An echo API (``tests/support/echo_api.py``) answers 400 repeating every request header and the
query string as they came, URL-encoded and in base64 at odd offsets, in a header of its own and
in GraphQL ``errors``. Its tools carry a bearer token, basic credentials and a query API key
(tool secrets); an MCP session brings its own header (``X-Target-Headers``). Every surface is
then searched for every value in every form: durable runs over REST (the run, the list, the
SSE events), the single-shot pipeline, MCP tool results (registry tools, the session's own
operation and its workflow), the server's log lines, its spans, and the database files —
SQLite's main file and WAL, or every table of a PostgreSQL database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from loguru import logger

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FAKE_LLM_CAPABILITIES, TEST_API_KEY
from tests.integration.e2e.test_hostile_runs_over_rest import wait_until_ended
from tests.support.echo_api import SESSION, echo_app, echo_registry, leaks
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.mcp_client import MODERN, mcp_client
from tests.support.postgres import fresh_database
from tests.support.servers import free_port, serve
from tests.support.spans import SpanRecorder, everything_recorded


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    with serve(echo_app()) as url:
        yield url


def echo_settings(tmp: Path, echo: str, fake_llm: FakeLLM, **overrides: Any) -> Settings:
    root = echo_registry(tmp, echo)
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": free_port(),
        "data_dir": tmp / "data",
        "registry_config_path": root / "config.yaml",
        "secrets_dir": tmp / "secrets",
        "openai_api_key": TEST_API_KEY,
        "openai_base_url": fake_llm.base_url,
        "llm_model": "fake-model",
        "llm_max_retries": 0,
        "llm_capabilities": FAKE_LLM_CAPABILITIES,
        "allowed_target_hosts": [echo.removeprefix("http://")],
        "enable_demo_api": False,
        "durable_runs": True,
        "executor_id": "echo-secrets",
        "log_json": True,
        "freeze_startup_heap": False,  # the test process's heap: tests/conftest.py
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def sse(url: str, run_id: str) -> str:
    with httpx.stream("GET", f"{url}/runs/{run_id}/events", timeout=30) as answer:
        return "".join(answer.iter_text())


def start_run(url: str, workflow: str) -> dict[str, Any]:
    answer = httpx.post(f"{url}/workflows/{workflow}/runs", json={"params": {}})
    assert answer.status_code == 202, answer.text
    return wait_until_ended(url, answer.json()["run_id"])


async def exercise(url: str, echo: str, settings: Settings, fake_llm: FakeLLM) -> dict[str, str]:
    """Every way a credential could come back, as the texts each surface shows."""
    shown: dict[str, str] = {}
    for workflow in ("echo_flow", "echo_graphql_flow"):
        run = start_run(url, workflow)
        assert run["status"] == "failed", run
        shown[f"GET /runs/{workflow}"] = json.dumps(run)
        shown[f"SSE {workflow}"] = sse(url, run["run_id"])
    # the calls were made, with the credentials, and answered with them
    assert "refused: *** (query )" in shown["GET /runs/echo_flow"]
    assert "(query key=***)" in shown["GET /runs/echo_flow"]
    assert "denied for ***" in shown["GET /runs/echo_graphql_flow"]
    shown["GET /runs"] = httpx.get(f"{url}/runs").text

    fake_llm.script(tool_call("echo_bearer", {}))
    pipeline = httpx.post(
        f"{url}/workflow",
        json={"user_instructions": "ask the echo API", "tool_ids": ["echo_bearer"]},
        timeout=30,
    )
    assert pipeline.status_code == 200, pipeline.text
    assert pipeline.json()["raw_response"]["status_code"] == 400
    shown["POST /workflow"] = pipeline.text

    for mode in (MODERN, "legacy"):
        async with mcp_client(url, mode=mode) as client:
            for tool in ("echo_bearer", "echo_basic", "echo_key", "echo_graphql"):
                result = await client.call_tool(tool, {})
                assert result.is_error
                shown[f"MCP {mode} {tool}"] = json.dumps(result.model_dump(mode="json"))
        session_headers = {
            "X-Target-URL": f"{echo}/openapi.json",
            "X-Target-Headers": json.dumps({"X-Session-Token": SESSION}),
            "X-Workflow-URL": f"file://{settings.registry_root / 'session_flows.yaml'}",
        }
        async with mcp_client(url, headers=session_headers, mode=mode) as client:
            direct = await client.call_tool("echo", {})
            flow = await client.call_tool("w_session_echo", {})
            execute = await client.call_tool("api_execute", {"tool": "echo", "arguments": {}})
        for name, result in (("echo", direct), ("w_session_echo", flow), ("execute", execute)):
            assert result.is_error, result
            shown[f"MCP {mode} session {name}"] = json.dumps(result.model_dump(mode="json"))
        assert (
            "X-Session-Token" in shown[f"MCP {mode} session echo"]
            or "x-session-token" in (shown[f"MCP {mode} session echo"])
        )
    session_runs = httpx.get(f"{url}/runs", params={"workflow_id": "session_echo"}).json()
    for item in session_runs.get("runs", session_runs if isinstance(session_runs, list) else []):
        run_id = item["run_id"]
        shown[f"GET /runs/{run_id}"] = httpx.get(f"{url}/runs/{run_id}").text
        shown[f"SSE {run_id}"] = sse(url, run_id)
    return shown


def database_files(data_dir: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in data_dir.rglob("*") if p.is_file()}


def postgres_rows(database_url: str) -> dict[str, str]:
    """Every table of every schema, each as the text of all its rows."""
    engine = sa.create_engine(sa.make_url(database_url).set(drivername="postgresql+psycopg"))
    tables: dict[str, str] = {}
    try:
        with engine.connect() as connection:
            names = connection.execute(
                sa.text(
                    "SELECT table_schema, table_name FROM information_schema.tables "
                    "WHERE table_type = 'BASE TABLE' "
                    "AND table_schema NOT IN ('pg_catalog', 'information_schema')"
                )
            ).all()
            for schema, table in names:
                rows = connection.execute(sa.text(f'SELECT t::text FROM "{schema}"."{table}" t'))
                tables[f"{schema}.{table}"] = "\n".join(r[0] for r in rows)
    finally:
        engine.dispose()
    return tables


def check(shown: dict[str, str], logs: list[str], spans: SpanRecorder) -> None:
    found = {where: leaks(text) for where, text in shown.items()}
    assert {k: v for k, v in found.items() if v} == {}
    assert leaks("\n".join(logs)) == []
    assert leaks(everything_recorded(spans.spans)) == []


async def run_everything(
    settings: Settings, echo: str, fake_llm: FakeLLM
) -> tuple[dict[str, str], list[str], SpanRecorder, dict[str, bytes]]:
    """Exercise every surface; the texts shown, the log lines, the spans, and the database
    files as they are while the server still runs (SQLite's WAL is folded in at shutdown)."""
    spans = SpanRecorder()
    lines: list[str] = []
    app = create_app(settings, tracing=spans.tracing)
    try:
        with serve(app, port=settings.port) as url:
            sink = logger.add(
                lambda m: lines.append(str(m)), level="DEBUG", format="{message} {extra}"
            )
            try:
                shown = await exercise(url, echo, settings, fake_llm)
                files = database_files(settings.data_dir)
            finally:
                logger.remove(sink)
    finally:
        spans.shutdown()
    return shown, lines, spans, files


async def test_no_echoed_credential_on_any_surface_or_in_sqlite_files(
    tmp_path: Path, echo: str, fake_llm: FakeLLM
) -> None:
    settings = echo_settings(tmp_path, echo, fake_llm)
    shown, lines, spans, files = await run_everything(settings, echo, fake_llm)
    check(shown, lines, spans)
    assert any(name.endswith("dynamic_tools.sqlite-wal") for name in files), sorted(files)
    files.update(database_files(settings.data_dir))  # and after shutdown
    assert {name: leaks(data) for name, data in files.items() if leaks(data)} == {}


async def test_no_echoed_credential_in_postgresql_tables(
    tmp_path: Path, echo: str, fake_llm: FakeLLM
) -> None:
    with fresh_database("dt_echo") as database_url:
        settings = echo_settings(tmp_path, echo, fake_llm, database_url=database_url)
        shown, lines, spans, _ = await run_everything(settings, echo, fake_llm)
        check(shown, lines, spans)
        tables = postgres_rows(database_url)
    assert any("operation_outputs" in t for t in tables), sorted(tables)
    assert {t: leaks(rows) for t, rows in tables.items() if leaks(rows)} == {}
