"""The second peer of the Arazzo conformance bench: Redocly's Respect (``redocly respect``).

The same fixtures, cases and loopback mock server as ours (``tests/support/arazzo_conformance.py``)
and arazzo-runner's (``bench/arazzo_peer.py``). Respect runs each case as ``redocly respect DOC
-w WORKFLOW --input JSON --server SOURCE=URL --json-output FILE``: ``--server`` maps each source
to the mock server (as our import's base URLs do); a fixture's mapped remote sources
(``sources``) are rewritten to its local copies in a scratch copy of the fixture. Respect's own
checks of responses against the OpenAPI description (status code, schema, content type) are
switched off (``--severity``): the cases judge the document's success criteria, as for the
other two runners.

Respect's JSON log reports each step's request, response and checks but no workflow or step
outputs, so it is judged by success and API calls only (the table says so).

Installed like the other npm peers (``tests/support/node_peers.py``): pinned, into the machine's
cache (``$XDG_CACHE_HOME/dynamic-tools/npm-peers/redocly-respect``), never into the checkout.
Without node/npm, or when the install fails, the bench prints why and goes on without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from tests.support.arazzo_conformance import (
    CaseResult,
    MockApi,
    arazzo_file,
    base_urls,
    case_label,
    case_mocks,
    expected_problems,
    fixtures,
    load_document,
)
from tests.support.node_peers import PEERS, installed_version

PINS = {"@redocly/cli": "2.77.0"}
PREFIX = PEERS / "redocly-respect"
CASE_TIMEOUT_S = 60
# Respect's checks of a response against the OpenAPI description: off, as for the other runners
SEVERITY = {"STATUS_CODE_CHECK": "off", "SCHEMA_CHECK": "off", "CONTENT_TYPE_CHECK": "off"}


def install() -> Path | str:
    """The ``redocly`` executable (installed when missing), or why it cannot be had."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return "node/npm not found on PATH"
    binary = PREFIX / "node_modules" / ".bin" / "redocly"
    if all(installed_version(PREFIX, p) == v for p, v in PINS.items()) and binary.is_file():
        return binary
    PREFIX.mkdir(parents=True, exist_ok=True)
    command = ["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--prefix"]
    command += [str(PREFIX), *(f"{p}@{v}" for p, v in PINS.items())]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "npm install @redocly/cli took more than 10 minutes"
    if done.returncode != 0 or not binary.is_file():
        return f"npm install @redocly/cli failed: {(done.stderr or done.stdout)[-300:]}"
    return binary


def workflow_outcome(log: dict[str, Any], workflow_id: str) -> tuple[bool, str | None]:
    """Whether Respect's JSON log (``--json-output``) says the workflow succeeded, and why not.

    A workflow succeeded when its status is ``success`` or ``warn`` (a warning does not fail
    it); the reason of a failure is the first failed check of its steps (nested workflows
    included), or "not run" when the log has no such workflow.
    """
    for document in (log.get("files") or {}).values():
        for workflow in document.get("executedWorkflows") or []:
            if workflow.get("workflowId") != workflow_id:
                continue
            status = str(workflow.get("status"))
            if status in ("success", "warn"):
                return True, None
            return False, _first_failure(workflow.get("executedSteps") or []) or status
    return False, "not run (the log has no such workflow)"


def _first_failure(steps: list[dict[str, Any]]) -> str | None:
    for step in steps:
        if step.get("type") == "workflow":
            found = _first_failure(step.get("executedSteps") or [])
            if found:
                return found
            continue
        for check in step.get("checks") or []:
            if not check.get("passed") and check.get("severity", "error") == "error":
                return f"{step.get('stepId')}: {check.get('name')}: {check.get('message')}"
    return None


def _scratch_copy(folder: Path, config: dict[str, Any], into: Path) -> Path:
    """The fixture copied into ``into``; its mapped sources' URLs pointed at local copies.

    Every Arazzo document of the fixture is rewritten (a document may run a workflow of
    another one, whose sources are named the same).
    """
    target = into / folder.name
    shutil.copytree(folder, target)
    mapped = config.get("sources") or {}
    for path in sorted(target.iterdir()):
        if not mapped or path.suffix not in (".yaml", ".yml", ".json"):
            continue
        text = path.read_text(encoding="utf-8")
        document = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        if not isinstance(document, dict) or "arazzo" not in document:
            continue
        for source in document.get("sourceDescriptions") or []:
            if source.get("name") in mapped:
                source["url"] = str(mapped[source["name"]])
        dumped = json.dumps(document) if path.suffix == ".json" else yaml.safe_dump(document)
        path.write_text(dumped, encoding="utf-8")
    return arazzo_file(target)


def run_respect(mock: MockApi, mock_url: str) -> list[CaseResult] | str:
    """Every fixture case through Respect, or why Respect cannot run here."""
    binary = install()
    if isinstance(binary, str):
        return binary
    env = {**os.environ, "REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"}
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        for folder in fixtures():
            config = yaml.safe_load((folder / "test_config.yaml").read_text(encoding="utf-8"))
            document_path = _scratch_copy(folder, config, Path(tmp))
            document = load_document(arazzo_file(folder))
            servers = base_urls(document, folder, config, mock_url)
            for case in config.get("workflows") or []:
                mock.reset(case_mocks(config, case))
                results.append(
                    _run_case(binary, document_path, folder.name, case, servers, mock, env)
                )
    return results


def _run_case(
    binary: Path,
    document_path: Path,
    fixture: str,
    case: dict[str, Any],
    servers: dict[str, str],
    mock: MockApi,
    env: dict[str, str],
) -> CaseResult:
    workflow_id = str(case.get("id"))
    log_path = document_path.parent / "respect-log.json"
    log_path.unlink(missing_ok=True)
    command = [str(binary), "respect", document_path.name, "--workflow", workflow_id]
    command += ["--input", json.dumps(case.get("inputs") or case.get("params") or {})]
    for name, url in servers.items():
        command += ["--server", f"{name}={url}"]
    command += ["--severity", json.dumps(SEVERITY), "--no-secrets-masking"]
    command += ["--max-steps", "200", "--json-output", log_path.name]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=document_path.parent,
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        failed = CaseResult(fixture, case_label(case), False, f"took over {CASE_TIMEOUT_S} s")
        failed.seconds = time.perf_counter() - started
        return failed
    elapsed = time.perf_counter() - started
    if not log_path.is_file():
        text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
        said = [line.strip() for line in text.splitlines()]
        said = [line for line in said if line and not line.startswith(("║", "╔", "╚"))]
        why = "wrote no JSON log: " + " / ".join(said[-3:])[:300]
        result = CaseResult(fixture, case_label(case), False, why)
        result.seconds = elapsed
        return result
    succeeded, error = workflow_outcome(json.loads(log_path.read_text()), workflow_id)
    judged = {k: v for k, v in case.items() if k != "expected_outputs"}  # no outputs reported
    problems = expected_problems(
        judged,
        succeeded=succeeded,
        error=error,
        output=lambda key: "(not reported)",
        step_output=lambda step, name: "(not reported)",
        mock=mock,
    )
    result = CaseResult(fixture, case_label(case), not problems, "; ".join(problems))
    result.seconds = elapsed
    return result


__all__ = ["PINS", "install", "run_respect", "workflow_outcome"]


if __name__ == "__main__":  # a quick look at Respect alone
    from tests.support.arazzo_conformance import mock_server

    with mock_server() as (api, url):
        found = run_respect(api, url)
    if isinstance(found, str):
        print(f"Respect not run: {found}")
    else:
        for item in found:
            print(item.fixture, item.case, item.passed, f"{item.seconds:.1f}s", item.why[:200])
