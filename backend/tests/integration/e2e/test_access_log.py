"""``serve`` writes access lines only when asked, one JSON line per request.

Real ``dynamic-tools serve`` processes: by default (INFO logs) no request leaves a line;
with ``ACCESS_LOG=true`` (or ``--access-log``) each request leaves exactly one line in the JSON
log format, with its method, path, status and client as fields, secrets in the query redacted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.support.processes import server
from tests.support.servers import free_port

SECRET = "s3cr3t-access-token-value"


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "DATA_DIR": str(tmp_path / "data"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "registry" / "config.yaml"),
        "DURABLE_RUNS": "false",
        "LOG_LEVEL": "INFO",
        "OPENAI_API_KEY": SECRET,
        **extra,
    }


def lines(log: Path) -> list[dict[str, Any]]:
    out = []
    for text in log.read_text().splitlines():
        if text.startswith("{"):
            out.append(json.loads(text))
    return out


def requests_to(base: str) -> None:
    for _ in range(3):
        assert httpx.get(f"{base}/tools", params={"probe": "1"}).status_code == 200
    assert httpx.get(f"{base}/nowhere", params={"key": SECRET}).status_code == 404


def test_no_access_lines_unless_asked(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "quiet.log"
    with server(port, env(tmp_path), log):
        requests_to(f"http://127.0.0.1:{port}")
    entries = lines(log)
    assert any(e["message"].startswith("Uvicorn running") for e in entries)  # INFO is on
    assert [e for e in entries if '"GET ' in e["message"] or e.get("method")] == []


def test_one_json_line_per_request_when_asked(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "loud.log"
    with server(port, env(tmp_path, ACCESS_LOG="true"), log):
        requests_to(f"http://127.0.0.1:{port}")
    access = [e for e in lines(log) if e["logger"] == "uvicorn.access"]
    tools = [e for e in access if e["path"].startswith("/tools")]
    assert len(tools) == 3
    assert {(e["method"], e["path"], e["status"]) for e in tools} == {
        ("GET", "/tools?probe=1", 200)
    }
    assert all(e["client"].startswith("127.0.0.1:") for e in tools)
    missing = [e for e in access if e["path"].startswith("/nowhere")]
    assert len(missing) == 1 and missing[0]["status"] == 404
    assert SECRET not in log.read_text()
