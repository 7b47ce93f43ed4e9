"""The MCP Inspector CLI (npm) against a live server: list, call, resources, headers, errors.

The Inspector is installed once (pinned) into the machine's npm peers cache
(``tests/support/node_peers.py``); without node and npm the tests fail (DT_NO_NODE=1 skips
them). It runs with its own HOME so it writes nothing to the user's ``~/.mcp-inspector``.

Every test runs for both revisions: ``--protocol-era legacy`` (the CLI's default: initialize,
2025-11-25) and ``--protocol-era modern`` (pinned to 2026-07-28: ``server/discover``, stateless
requests). The Inspector 2.12.0 is built on the TypeScript SDK 2.3.1 (@modelcontextprotocol/client).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.node_peers import PEERS, npm_install, opted_out, require

VERSION = "2.12.0"
PACKAGE = "@modelcontextprotocol/inspector"
TRIP = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
#: the Inspector's protocol era -> the revision it negotiates with this server
REVISIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}

Inspector = tuple[Path, dict[str, str], str]

if opted_out():
    pytest.skip("DT_NO_NODE=1: node-based MCP peers are not run", allow_module_level=True)


def npm_installs() -> list[tuple[Path, dict[str, str]]]:
    """The pinned Inspector."""
    return [(PEERS / "npm-inspector", {PACKAGE: VERSION})]


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The pinned Inspector CLI and the environment to run it in (a private HOME)."""
    require("node", "npm")
    prefix = npm_install(*npm_installs()[0])
    env = dict(os.environ, HOME=str(tmp_path_factory.mktemp("inspector-home")))
    return prefix / "node_modules" / ".bin" / "mcp-inspector", env


@pytest.fixture(params=list(REVISIONS))
def inspector(installed: tuple[Path, dict[str, str]], request: pytest.FixtureRequest) -> Inspector:
    """The Inspector CLI, its environment and the protocol era it is run with."""
    return (*installed, request.param)


def cli(inspector: Inspector, server: str, *args: str) -> subprocess.CompletedProcess[str]:
    binary, env, era = inspector
    command = [str(binary), "--cli", f"{server}/mcp", "--transport", "http"]
    command += ["--protocol-era", era, "--format", "json", "--quiet", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def run(inspector: Inspector, server: str, *args: str) -> dict[str, Any]:
    """The result object of a successful Inspector call."""
    done = cli(inspector, server, *args)
    assert done.returncode == 0, done.stderr + done.stdout
    result: dict[str, Any] = json.loads(done.stdout)["result"]
    return result


def test_the_inspector_negotiates_the_revision_of_its_era(
    inspector: Inspector, server: str
) -> None:
    # `--method initialize` prints what the connection negotiated: on the modern era the
    # Inspector sends no initialize but server/discover, and our answer has no logging
    # capability (deprecated in 2026-07-28) and no list-changed notifications (no sessions).
    answered = run(inspector, server, "--method", "initialize")
    era = inspector[2]
    assert answered["protocolVersion"] == REVISIONS[era]
    assert answered["serverInfo"]["name"] == "dynamic-tools"
    capabilities = answered["capabilities"]
    assert ("logging" in capabilities) is (era == "legacy")
    assert capabilities["tools"]["listChanged"] is (era == "legacy")


def test_the_inspector_lists_and_calls(inspector: Inspector, server: str) -> None:
    # --strict exits 6 when a tool schema has an error-severity portability problem.
    listed = run(inspector, server, "--method", "tools/list", "--strict")
    tools = {t["name"]: t for t in listed["tools"]}
    assert {"search_flights", "api_query", "api_plan", "w_book_flight"} <= set(tools)
    assert tools["search_flights"]["annotations"]["readOnlyHint"] is True
    pairs = [f"{k}={v}" for k, v in TRIP.items()]
    found = run(
        inspector,
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "search_flights",
        "--tool-arg",
        *pairs,
    )
    assert found["isError"] is False
    flights = found["structuredContent"]["result"]
    assert len(flights) == 3 and {f["destination"] for f in flights} == {"BCN"}
    booked = run(
        inspector,
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "w_book_flight",
        "--tool-args-json",
        json.dumps({**TRIP, "passenger": "Ada"}),
    )
    assert booked["structuredContent"]["status"] == "succeeded"
    assert booked["structuredContent"]["result"]["status"] == "reserved"
    assert booked["structuredContent"]["result"]["passenger"] == "Ada"


def test_the_inspector_reads_resources_and_sends_headers(inspector: Inspector, server: str) -> None:
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
    assert {"travel_query", "travel_plan"} <= names and "api_query" not in names


def test_the_inspector_shows_a_tool_error(inspector: Inspector, server: str) -> None:
    # api_execute has no outputSchema, so the Inspector prints our isError result and exits 5.
    done = cli(
        inspector,
        server,
        "--method",
        "tools/call",
        "--tool-name",
        "api_execute",
        "--tool-args-json",
        json.dumps({"command": "teleport"}),
    )
    assert done.returncode == 5, done.stderr + done.stdout
    result = json.loads(done.stdout)["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error_code"] == "INVALID_INPUT"
    assert result["structuredContent"]["category"] == "validation"
    assert "tool_is_error" in done.stderr


def test_the_inspector_shows_an_error_of_a_tool_with_an_output_schema(
    inspector: Inspector, server: str
) -> None:
    # The Inspector checks structuredContent against the tool's outputSchema even on errors;
    # our error results of such tools carry the payload as text only, so it shows the error.
    for tool, arguments in (
        ("search_flights", {**TRIP, "destination": 5}),  # an API tool
        ("w_book_flight", {**TRIP}),  # a workflow (the passenger is missing)
    ):
        done = cli(
            inspector,
            server,
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            json.dumps(arguments),
        )
        assert done.returncode == 5, done.stderr + done.stdout  # a tool error, not exit 1
        assert "must have required property" not in done.stdout + done.stderr
        result = json.loads(done.stdout)["result"]
        assert result["isError"] is True and "structuredContent" not in result
        text = result["content"][0]["text"]
        assert text.startswith("INVALID_INPUT: ")
        payload = json.loads(text.partition("\n")[2])
        assert payload["category"] == "validation" and payload["violations"]


def test_the_inspector_lists_with_strict_schemas_and_routing_meta(
    inspector: Inspector, server: str
) -> None:
    listed = run(inspector, server, "--method", "tools/list", "--strict")
    tools = {t["name"]: t for t in listed["tools"]}
    assert {"command.list", "provider.list"} <= set(tools)
    assert all("execution_type" in t["_meta"] for t in tools.values())
    assert tools["search_flights"]["_meta"]["http_method"] == "GET"
