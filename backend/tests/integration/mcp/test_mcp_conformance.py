"""The MCP conformance suite's server scenarios that apply to this server, for both revisions.

The suite (pinned) needs node >= 22; the npm package ``node-<os>-<arch>@22`` provides it, so
both are installed into ``npm-conformance`` of the machine's npm peers cache
(``tests/support/node_peers.py``). Without npm the tests fail; DT_NO_NODE=1 skips them.
Results and reasons: docs/mcp-conformance.md.

Revision 2025-11-25 (initialize and sessions) runs with the suite's latest release, 0.1.16.
Revision 2026-07-28 (stateless, ``server/discover``) runs with its next version
(``npm-conformance-next``, 0.2.0-alpha.12): 0.1.16 does not know that revision, and
``--spec-version 2026-07-28`` makes the suite speak it (``MCP-Protocol-Version: 2026-07-28`` and
the per-request ``_meta`` on every request, no ``initialize``).

``server-sse-polling`` (resumable streams) runs with the next version as well: 0.1.16 probes
with ``MCP-Protocol-Version: 2025-03-26``, a revision whose clients cannot take the priming
event, so a correctly gated server sends none there.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.node_peers import PEERS, node_package, npm_install, opted_out

SUITE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.1.16"
NEXT_SUITE_VERSION = "0.2.0-alpha.12"  # sends the negotiated version in server-sse-polling
NODE_VERSION = "22.23.3"
SPEC = "2025-11-25"

PASSING = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "logging-set-level",
    "completion-complete",
    "resources-subscribe",
    "resources-unsubscribe",
]

# Scenario -> why it is not expected to pass against this server.
FIXTURE = "calls a fixture of the suite's reference server that a product server does not have"
EXCLUDED = {
    "tools-call-with-logging": f"{FIXTURE} (test_tool_with_logging); logging/setLevel itself "
    "passes (logging-set-level)",
    "server-sse-polling": "suite 0.1.16 probes with MCP-Protocol-Version 2025-03-26, so no "
    "priming event is due; passes with the suite's fix (test_resumable_streams_pass_with_the_"
    "fixed_suite) except the step that needs the fixture tool test_reconnection",
    "tools-call-simple-text": f"{FIXTURE} (test_simple_text)",
    "tools-call-image": f"{FIXTURE} (test_image_content)",
    "tools-call-audio": f"{FIXTURE} (test_audio_content)",
    "tools-call-embedded-resource": f"{FIXTURE} (test_embedded_resource)",
    "tools-call-mixed-content": f"{FIXTURE} (test_multiple_content_types)",
    "tools-call-error": f"{FIXTURE} (test_error_handling)",
    "tools-call-with-progress": f"{FIXTURE} (test_tool_with_progress)",
    "tools-call-sampling": f"{FIXTURE} (test_sampling)",
    "tools-call-elicitation": f"{FIXTURE} (test_elicitation)",
    "json-schema-2020-12": f"{FIXTURE} (json_schema_2020_12_tool)",
    "elicitation-sep1034-defaults": f"{FIXTURE} (test_elicitation_sep1034_defaults)",
    "elicitation-sep1330-enums": f"{FIXTURE} (test_elicitation_sep1330_enums)",
    "resources-read-text": f"{FIXTURE} (test://static-text)",
    "resources-read-binary": f"{FIXTURE} (test://static-binary)",
    "resources-templates-read": f"{FIXTURE} (test://template/{{id}}/data)",
    "prompts-get-simple": f"{FIXTURE} (test_simple_prompt)",
    "prompts-get-with-args": f"{FIXTURE} (test_prompt_with_arguments)",
    "prompts-get-embedded-resource": f"{FIXTURE} (test_prompt_with_embedded_resource)",
    "prompts-get-with-image": f"{FIXTURE} (test_prompt_with_image)",
}

MODERN = "2026-07-28"
MODERN_SUITE_VERSION = NEXT_SUITE_VERSION  # 0.1.16 answers "Unknown spec version: 2026-07-28"

MODERN_PASSING = [
    "completion-complete",
    "tools-list",
    "server-sse-multiple-streams",
    "resources-list",
    "sep-2164-resource-not-found",
    "prompts-list",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "input-required-result-unsupported-methods",
    "input-required-result-validate-input",
]
# Passes every check it can exercise; four need the suite's diagnostic tools (the test below).
STATELESS = "server-stateless"

TASKS = (
    "Tasks extension (io.modelcontextprotocol/tasks, not scored for 2026-07-28): every check "
    "that does not call a fixture tool of the suite's reference server passes "
    "(test_2026_tasks_checks_pass_except_those_calling_fixture_tools)"
)
#: the Tasks extension's checks that need no fixture tool: all pass (run with --force)
TASK_CHECKS = {
    "tasks-capability-negotiation": {
        "tasks-extension-advertised",
        "sep-2663-tasks-methods-non-declaring",
    },
    "tasks-request-headers": {"tasks-headers-reject-mismatched-method"},
    "tasks-dispatch-and-envelope": {
        "sep-2663-tasks-result-removed-method-not-found",
        "tasks-removed-tasks-list",
        "sep-2663-tasks-get-invalid-task-id-32602",
    },
}
TASK_SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
]
#: how a check says it needed a fixture of the reference server (a tool this server lacks)
NEEDS_FIXTURE = re.compile(
    r"Unknown tool: '(greet|slow_compute|failing_job|protocol_error_job|confirm_delete|"
    r"multi_input|test_tool_with_task)'|Not testable: no task was created by the preceding step|"
    r"fixture from Check \d+ unavailable|tools/call for failing_job returned error code -32602"
)
MODERN_EXCLUDED = {
    "tools-call-simple-text": EXCLUDED["tools-call-simple-text"],
    "tools-call-image": EXCLUDED["tools-call-image"],
    "tools-call-audio": EXCLUDED["tools-call-audio"],
    "tools-call-embedded-resource": EXCLUDED["tools-call-embedded-resource"],
    "tools-call-mixed-content": EXCLUDED["tools-call-mixed-content"],
    "tools-call-error": EXCLUDED["tools-call-error"],
    "tools-call-with-progress": EXCLUDED["tools-call-with-progress"],
    "json-schema-2020-12": EXCLUDED["json-schema-2020-12"] + "; pending in the suite",
    "resources-read-text": EXCLUDED["resources-read-text"],
    "resources-read-binary": EXCLUDED["resources-read-binary"],
    "resources-templates-read": EXCLUDED["resources-templates-read"],
    "prompts-get-simple": EXCLUDED["prompts-get-simple"],
    "prompts-get-with-args": EXCLUDED["prompts-get-with-args"],
    "prompts-get-embedded-resource": EXCLUDED["prompts-get-embedded-resource"],
    "prompts-get-with-image": EXCLUDED["prompts-get-with-image"],
    "http-custom-header-server-validation": "untestable here (the suite says so): no tool of "
    "the travel example has an x-mcp-header parameter; pending in the suite",
    "input-required-result-basic-elicitation": f"{FIXTURE} "
    "(test_input_required_result_elicitation); ours: test_mcp_confirmation.py, test_mcp_tools.py",
    "input-required-result-basic-sampling": f"{FIXTURE} (test_input_required_result_sampling)",
    "input-required-result-basic-list-roots": f"{FIXTURE} (test_input_required_result_list_roots)",
    "input-required-result-request-state": f"{FIXTURE} (test_input_required_result_request_state)",
    "input-required-result-multiple-input-requests": f"{FIXTURE} "
    "(test_input_required_result_multiple_inputs)",
    "input-required-result-multi-round": f"{FIXTURE} (test_input_required_result_multi_round)",
    "input-required-result-missing-input-response": f"{FIXTURE} "
    "(test_input_required_result_elicitation): a warning, the unknown tool's error",
    "input-required-result-non-tool-request": f"{FIXTURE} (test_input_required_result_prompt)",
    "input-required-result-result-type": f"{FIXTURE} (test_input_required_result_elicitation)",
    "input-required-result-tampered-state": f"{FIXTURE} "
    "(test_input_required_result_tampered_state); ours answer -32602 as it wants "
    "(test_mcp_modern_wire.py)",
    "input-required-result-capability-check": f"{FIXTURE} "
    "(test_input_required_result_capabilities)",
    "input-required-result-ignore-extra-params": f"{FIXTURE} "
    "(test_input_required_result_elicitation): a warning, the unknown tool's error",
    "tasks-lifecycle": TASKS,
    "tasks-capability-negotiation": TASKS,
    "tasks-wire-fields": TASKS,
    "tasks-request-state-removal": TASKS,
    "tasks-mrtr-input": TASKS,
    "tasks-request-headers": TASKS,
    "tasks-dispatch-and-envelope": TASKS,
    "tasks-status-notifications": TASKS + "; skipped by the suite 0.2.0-alpha.12 itself",
    "tasks-required-task-error": TASKS,
    "tasks-mrtr-composition": TASKS,
}

if opted_out():
    pytest.skip("DT_NO_NODE=1: node-based MCP peers are not run", allow_module_level=True)


def npm_installs() -> list[tuple[Path, dict[str, str]]]:
    """The pinned suite with the pinned node 22, then the suite's next version."""
    return [
        (PEERS / "npm-conformance", {node_package(): NODE_VERSION, SUITE: SUITE_VERSION}),
        (PEERS / "npm-conformance-next", {SUITE: NEXT_SUITE_VERSION}),
    ]


@pytest.fixture(scope="session")
def conformance() -> list[str]:
    """The command prefix running the pinned suite with the pinned node 22."""
    package = node_package()
    prefix = npm_install(*npm_installs()[0])
    node = prefix / "node_modules" / package / "bin" / "node"
    entry = (prefix / "node_modules" / ".bin" / "conformance").resolve()
    return [str(node), str(entry)]


def test_every_server_scenario_is_either_expected_to_pass_or_excluded_with_a_reason(
    conformance: list[str],
) -> None:
    done = subprocess.run(
        [*conformance, "list", "--server", "--spec-version", SPEC],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    listed = re.findall(r"^\s+- (\S+)", done.stdout, re.MULTILINE)
    assert len(listed) == 32
    assert sorted(listed) == sorted(PASSING + list(EXCLUDED))


def run_scenario(
    suite: list[str], server: str, scenario: str, out: Path, *spec: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Run one scenario against ``server``; the finished process and the checks it wrote."""
    command = [*suite, "server", "--url", f"{server}/mcp", "--scenario", scenario, *spec]
    done = subprocess.run(
        [*command, "--output-dir", str(out)], capture_output=True, text=True, timeout=120
    )
    checks: list[dict[str, Any]] = []
    for path in out.rglob("checks.json"):
        checks += json.loads(path.read_text())
    return done, checks


def assert_passed(done: subprocess.CompletedProcess[str], checks: list[dict[str, Any]]) -> None:
    output = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, output
    statuses = [c["status"] for c in checks]
    assert "SUCCESS" in statuses, output
    assert not {"FAILURE", "WARNING"} & set(statuses), output


@pytest.mark.parametrize("scenario", PASSING)
def test_server_scenario_passes(
    conformance: list[str], server: str, scenario: str, tmp_path: Path
) -> None:
    assert_passed(*run_scenario(conformance, server, scenario, tmp_path))


@pytest.fixture(scope="session")
def next_conformance(conformance: list[str]) -> list[str]:
    """The suite's next (pinned) version, run with the same node 22."""
    prefix = npm_install(*npm_installs()[1])
    entry = (prefix / "node_modules" / ".bin" / "conformance").resolve()
    return [conformance[0], str(entry)]


def test_resumable_streams_pass_with_the_fixed_suite(
    next_conformance: list[str], server: str, tmp_path: Path
) -> None:
    command = [*next_conformance, "server", "--url", f"{server}/mcp"]
    command += ["--scenario", "server-sse-polling", "--output-dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    output = (done.stdout + done.stderr)[-3000:]
    checks: dict[str, dict[str, Any]] = {}
    for path in tmp_path.rglob("checks.json"):
        checks.update({c["id"]: c for c in json.loads(path.read_text())})
    assert checks["server-sse-priming-event"]["status"] == "SUCCESS", output
    assert checks["server-sse-priming-event"]["details"]["primingEventIsFirst"] is True
    assert checks["server-sse-retry-field"]["status"] == "SUCCESS", output
    assert checks["server-sse-retry-field"]["details"]["retryValue"] == 1000
    # The last step calls the suite's fixture tool test_reconnection, which closes the stream
    # mid-call: this server has no such tool (-32602), so nothing is left to resume. Resuming
    # a real call is test_mcp_utilities.py::test_a_dropped_stream_is_resumed_with_last_event_id.
    not_passed = {
        k: c["status"] for k, c in checks.items() if c["status"] in ("FAILURE", "WARNING")
    }
    assert not_passed == {"server-sse-disconnect-resume": "WARNING"}, output
    assert checks["server-sse-disconnect-resume"]["details"]["receivedToolResponse"] is False


def test_session_lifecycle_passes_with_the_next_suite(
    next_conformance: list[str], server: str, tmp_path: Path
) -> None:
    # A 2025-11-25 scenario the suite added after 0.1.16 (not in its 32): sessions are created
    # by initialize, required afterwards, and ended by DELETE.
    done, checks = run_scenario(
        next_conformance, server, "server-session-lifecycle", tmp_path, "--spec-version", SPEC
    )
    assert_passed(done, checks)
    assert len([c for c in checks if c["status"] == "SUCCESS"]) == 3


# --- revision 2026-07-28 ------------------------------------------------------------------------


def test_every_2026_server_scenario_is_either_expected_to_pass_or_excluded_with_a_reason(
    next_conformance: list[str],
) -> None:
    # The requirement set frozen at the revision's release (scored), plus what the suite runs
    # at that revision but does not score: the Tasks extension's scenarios and pending ones.
    done = subprocess.run(
        [*next_conformance, "list", "--server", "--requirements", MODERN],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    block = done.stdout.partition("Server scenarios")[2].partition("\n\n")[0]
    required = re.findall(r"^  - (\S+)$", block, re.MULTILINE)
    unscored = re.findall(r"^\s+- (\S+) \[server\]$", done.stdout, re.MULTILINE)
    assert (len(required), len(unscored)) == (37, 13)
    expected = [*MODERN_PASSING, STATELESS, *MODERN_EXCLUDED]
    assert sorted(required + unscored) == sorted(expected)


@pytest.mark.parametrize("scenario", MODERN_PASSING)
def test_2026_server_scenario_passes(
    next_conformance: list[str], server: str, scenario: str, tmp_path: Path
) -> None:
    done, checks = run_scenario(
        next_conformance, server, scenario, tmp_path, "--spec-version", MODERN
    )
    assert_passed(done, checks)


def test_2026_stateless_scenario_passes_all_but_the_checks_needing_diagnostic_tools(
    next_conformance: list[str], server: str, tmp_path: Path
) -> None:
    done, checks = run_scenario(
        next_conformance, server, STATELESS, tmp_path, "--spec-version", MODERN
    )
    output = (done.stdout + done.stderr)[-3000:]
    passed = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    assert {
        "sep-2575-server-implements-discover",
        "sep-2575-server-unsupported-version-error",
        "sep-2575-http-server-header-mismatch-400",
        "sep-2575-http-server-method-not-found-404-initialize",
        "sep-2575-http-server-method-not-found-404-resources-subscribe",
        "sep-2575-request-meta-invalid-missing-client-capabilities",
    } <= passed, output
    # These call the suite's diagnostic tools (test_missing_capability, test_streaming_elicitation,
    # test_logging_tool); the suite itself marks them untestable against another server.
    not_passed = {c["id"]: c for c in checks if c["status"] in ("FAILURE", "WARNING")}
    assert set(not_passed) == {
        "sep-2575-server-rejects-undeclared-capability",
        "sep-2575-missing-capability-http-400",
        "sep-2575-http-server-no-independent-requests-on-stream",
        "sep-2575-server-no-log-without-loglevel",
    }, output
    assert all(c["details"]["untestable"] is True for c in not_passed.values())


@pytest.mark.parametrize("scenario", TASK_SCENARIOS)
def test_2026_tasks_checks_pass_except_those_calling_fixture_tools(
    next_conformance: list[str], server: str, scenario: str, tmp_path: Path
) -> None:
    # Extension scenarios are off the spec timeline: the suite runs them with --force.
    done, checks = run_scenario(
        next_conformance, server, scenario, tmp_path, "--spec-version", MODERN, "--force"
    )
    output = (done.stdout + done.stderr)[-3000:]
    by_id = {c["id"]: c for c in checks}
    assert by_id["wire-schema-valid"]["status"] == "SUCCESS", output
    for check_id in TASK_CHECKS.get(scenario, set()):
        assert by_id[check_id]["status"] == "SUCCESS", (check_id, output)
    for check in checks:
        if check["status"] in ("FAILURE", "WARNING"):
            why = str(check.get("errorMessage") or check.get("details") or "")
            assert NEEDS_FIXTURE.search(why), (check["id"], why)
