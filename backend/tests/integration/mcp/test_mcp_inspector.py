"""The MCP Inspector CLI (npm) against a live server: list, call, resources, headers.

The Inspector is installed once per test session into a git-ignored directory; without node
and npm the tests fail (set DT_NO_NODE=1 to skip them on a machine without node).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

VERSION = "2.12.0"
PREFIX = Path(__file__).resolve().parents[3] / "test-artifacts" / "npm-inspector"
BIN = PREFIX / "node_modules" / ".bin" / "mcp-inspector"

if os.environ.get("DT_NO_NODE") == "1":
    pytest.skip("DT_NO_NODE=1: node-based peers are not run", allow_module_level=True)


@pytest.fixture(scope="session")
def inspector() -> Path:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed for the MCP Inspector (DT_NO_NODE=1 to skip)")
    if not BIN.exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(PREFIX),
                f"@modelcontextprotocol/inspector@{VERSION}",
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return BIN


def run(inspector: Path, server: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(inspector), "--cli", f"{server}/mcp", "--transport", "http", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_the_inspector_lists_and_calls(inspector: Path, server: str) -> None:
    listed = run(inspector, server, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert {"search_flights", "api_query", "api_plan", "w_book_flight"} <= names
    found = run(
        inspector,
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "search_flights",
        "--tool-arg",
        "origin=AMS",
        "--tool-arg",
        "destination=BCN",
        "--tool-arg",
        "date=2026-12-01",
    )
    assert len(found["structuredContent"]["result"]) == 3
    booked = run(
        inspector,
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "w_book_flight",
        "--tool-arg",
        "origin=AMS",
        "--tool-arg",
        "destination=BCN",
        "--tool-arg",
        "date=2026-12-01",
        "--tool-arg",
        "passenger=Ada",
    )
    assert booked["structuredContent"]["status"] == "succeeded"
    assert booked["structuredContent"]["result"]["status"] == "reserved"


def test_the_inspector_reads_resources_and_sends_headers(inspector: Path, server: str) -> None:
    resources = run(inspector, server, "--method", "resources/list")
    assert "workflow://travel_booking/overview" in {r["uri"] for r in resources["resources"]}
    guide = run(
        inspector,
        server,
        "--method",
        "resources/read",
        "--uri",
        "workflow://travel_booking/overview",
    )
    assert guide["contents"][0]["text"].startswith("# travel_booking — Workflow Guide")
    renamed = run(inspector, server, "--method", "tools/list", "--header", "X-API-Name: travel")
    names = {t["name"] for t in renamed["tools"]}
    assert "travel_query" in names and "api_query" not in names
