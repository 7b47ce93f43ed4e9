"""Reading Respect's JSON log (``redocly respect --json-output``): a workflow's outcome."""

from __future__ import annotations

from typing import Any

from bench.arazzo_respect import workflow_outcome


def _log(*workflows: dict[str, Any]) -> dict[str, Any]:
    return {"files": {"doc.arazzo.yaml": {"executedWorkflows": list(workflows)}}}


def _step(step_id: str, *checks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "step", "stepId": step_id, "checks": list(checks)}


PASSED = {"name": "success criteria check", "passed": True, "severity": "error"}
FAILED = {"name": "success criteria check", "passed": False, "severity": "error", "message": "no"}
WARNED = {"name": "schema check", "passed": False, "severity": "warn", "message": "off"}


def test_a_successful_or_warned_workflow_succeeded() -> None:
    log = _log(
        {"workflowId": "a", "status": "success", "executedSteps": [_step("s", PASSED)]},
        {"workflowId": "b", "status": "warn", "executedSteps": [_step("s", WARNED)]},
    )
    assert workflow_outcome(log, "a") == (True, None)
    assert workflow_outcome(log, "b") == (True, None)


def test_a_failed_workflow_names_its_first_failed_error_check_nested_ones_included() -> None:
    nested = {"type": "workflow", "workflowId": "inner", "executedSteps": [_step("t", FAILED)]}
    log = _log(
        {
            "workflowId": "outer",
            "status": "error",
            "executedSteps": [_step("s", PASSED, WARNED), nested],
        }
    )
    assert workflow_outcome(log, "outer") == (False, "t: success criteria check: no")


def test_a_failed_workflow_without_a_failed_check_says_its_status() -> None:
    log = _log({"workflowId": "a", "status": "error", "executedSteps": []})
    assert workflow_outcome(log, "a") == (False, "error")


def test_a_workflow_missing_from_the_log_did_not_run() -> None:
    log = _log({"workflowId": "a", "status": "success", "executedSteps": []})
    succeeded, why = workflow_outcome(log, "b")
    assert not succeeded and why is not None and why.startswith("not run")
    assert workflow_outcome({}, "a")[0] is False
