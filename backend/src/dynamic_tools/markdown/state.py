"""Session state of a markdown workflow and its transitions (pure: no I/O, no clock).

Statuses of a step: ``not_started → in_progress → passed | failed``, or ``skipped`` when an
earlier step failed. Statuses of the workflow: ``ready`` (loaded, nothing started), ``running``,
``completed`` (every step passed), ``failed`` (a step failed; the steps after it are skipped).

``current`` is the step at hand: the one to execute or report next, or, after a failure, the
step that failed. It is None only once the workflow completed.

The rules (each breach raises a :class:`MarkdownWorkflowError` and changes nothing):

- Only the step at hand may be executed or reported; any other is ``step_out_of_order``.
- Executing it again while it is in progress returns the same prompt (no new attempt).
- Reporting it without executing it first is accepted (it counts as an attempt).
- **Retry without reset**: after a failure, executing the failed step again, or reporting it
  again, starts a new attempt: the failed step goes back to ``in_progress``, the skipped steps
  to ``not_started``, the workflow to ``running``. Variables set by earlier steps are kept.
  A step gets at most ``MAX_ATTEMPTS`` attempts; ``reset_workflow`` starts the count again.
- A report is validated before it is recorded: one assertion result per assertion; when the
  step passed, a value for every declared output. A step reported ``passed`` with a failed
  assertion is recorded as ``failed`` (the criteria decide), with a warning.
- Only declared outputs become variables (names matched ignoring case); others are kept with
  the step's record and reported in a warning.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.markdown import errors
from dynamic_tools.markdown.models import MarkdownWorkflow, WorkflowStep
from dynamic_tools.markdown.prompts import resolve

StepStatus = Literal["not_started", "in_progress", "passed", "failed", "skipped"]
WorkflowStatus = Literal["ready", "running", "completed", "failed"]
HISTORY_LIMIT = 200
MAX_ATTEMPTS = 5
"""Attempts a step gets before a retry is refused (a reset starts the count again)."""


class AssertionResult(LazyModel):
    """The model's verdict on one assertion."""

    assertion: str
    passed: bool
    detail: str = ""
    line: int


class StepRecord(LazyModel):
    """What happened to one step."""

    number: int
    name: str
    status: StepStatus = "not_started"
    attempts: int = 0
    assertion_results: list[AssertionResult] = []
    output_variables: dict[str, Any] = {}
    error_message: str = ""
    started_at: str | None = None
    reported_at: str | None = None


class SessionState(LazyModel):
    """A session's markdown workflow, its variables and the record of every step."""

    model_config = ConfigDict(extra="ignore")

    session_id: str
    workflow: MarkdownWorkflow
    initial_variables: dict[str, Any]
    variables: dict[str, Any]
    steps: list[StepRecord]
    current: int | None = 0
    status: WorkflowStatus = "ready"
    loaded_at: str
    updated_at: str
    history: list[dict[str, Any]] = Field(default=[], description="Newest last, bounded.")

    @classmethod
    def start(
        cls, session_id: str, workflow: MarkdownWorkflow, variables: dict[str, Any], now: str
    ) -> SessionState:
        """A fresh session at step 0."""
        records = [StepRecord(number=s.number, name=s.name) for s in workflow.steps]
        state = cls(
            session_id=session_id,
            workflow=workflow,
            initial_variables=dict(variables),
            variables=dict(variables),
            steps=records,
            loaded_at=now,
            updated_at=now,
        )
        state._log(now, "loaded", None, workflow.source)
        return state

    # --- queries ------------------------------------------------------------------------------
    def step(self, number: int) -> WorkflowStep:
        """The parsed step ``number``."""
        return self.workflow.steps[number]

    def missing_variables(self, number: int) -> list[tuple[str, int]]:
        """Variables step ``number`` reads that have no value yet, with their lines."""
        return [(u.name, u.line) for u in self.step(number).reads if u.name not in self.variables]

    # --- transitions --------------------------------------------------------------------------
    def reset(self, now: str) -> None:
        """Back to step 0 with the variables given at load; the workflow stays loaded."""
        self.variables = dict(self.initial_variables)
        self.steps = [StepRecord(number=s.number, name=s.name) for s in self.workflow.steps]
        self.current, self.status, self.updated_at = 0, "ready", now
        self._log(now, "reset", None, "")

    def begin(self, number: int | None, now: str) -> tuple[WorkflowStep, bool]:
        """Put step ``number`` (default: the step at hand) in progress; True if a new attempt."""
        target = self._check_order(number, "execute")
        record = self.steps[target]
        missing = self.missing_variables(target)
        if missing:
            name, line = missing[0]
            raise errors.variable_missing(
                name,
                line,
                step=record.name,
                when="yet",
                suggestion=(
                    f"'{name}' is set by no earlier step and was not given at load. Call "
                    f'load_workflow again with variables {{"{name}": ...}}, or fix the '
                    "workflow so an earlier step outputs it."
                ),
            )
        if self.status == "failed":
            self._check_attempts(target)
            self._reopen(target)
        fresh = record.status != "in_progress"
        if fresh:
            record.status, record.attempts, record.started_at = (
                "in_progress",
                record.attempts + 1,
                now,
            )
            record.assertion_results, record.output_variables, record.error_message = [], {}, ""
            record.reported_at = None
            self.status, self.updated_at = "running", now
            self._log(now, "started", target, f"attempt {record.attempts}")
        return self.step(target), fresh

    def record(
        self,
        number: int,
        status: str,
        assertion_results: list[dict[str, Any]],
        output_variables: dict[str, Any],
        error_message: str,
        now: str,
    ) -> tuple[StepRecord, list[str]]:
        """Record the model's report on step ``number``; returns the record and warnings."""
        target = self._check_order(number, "report")
        step, record = self.step(target), self.steps[target]
        if status not in ("passed", "failed"):
            raise errors.invalid_request(
                f"status '{status}' is neither 'passed' nor 'failed'",
                "Report status 'passed' or 'failed'.",
                line=step.line,
            )
        warnings: list[str] = []
        results = self._match_assertions(step, assertion_results, warnings)
        outputs, extra = self._match_outputs(step, output_variables)
        effective = status
        failed = [r for r in results if not r.passed]
        if status == "passed" and failed:
            effective = "failed"
            warnings.append(
                f"you reported 'passed', but the assertion '{failed[0].assertion}' did not hold:"
                " the step is recorded as failed"
            )
        if effective == "passed":
            self._require_outputs(step, outputs)
        if extra:
            warnings.append(
                "output variables the step does not declare were kept with the step but not "
                f"set: {', '.join(sorted(extra))}"
            )
        if self.status == "failed":
            self._check_attempts(target)
            self._reopen(target)
        if record.status != "in_progress":
            record.attempts, record.started_at = record.attempts + 1, now
        record.status = "passed" if effective == "passed" else "failed"
        record.assertion_results, record.output_variables = results, {**outputs, **extra}
        derived = warnings[0] if effective != status else ""
        record.error_message = error_message or derived
        record.reported_at, self.updated_at = now, now
        if effective == "passed":
            self.variables.update(outputs)
            self.current = target + 1 if target + 1 < len(self.steps) else None
            self.status = "running" if self.current is not None else "completed"
        else:
            for later in self.steps[target + 1 :]:
                later.status = "skipped"
            self.status = "failed"
        self._log(now, "reported", target, record.status)
        return record, warnings

    # --- rules ----------------------------------------------------------------------------------
    def _check_order(self, number: int | None, action: str) -> int:
        current = self.current
        if current is None:
            raise errors.step_out_of_order(
                f"the workflow has completed: there is no step to {action}",
                expected=None,
                line=None,
                reported=number,
                suggestion="Call get_workflow_state for the results, or reset_workflow to run "
                "it again.",
            )
        if number is None:
            return current
        if number != current:
            expected = self.step(current)
            known = 0 <= number < len(self.steps)
            what = f"step {number} ('{self.steps[number].name}')" if known else f"step {number}"
            exists = "" if known else f", which does not exist (steps 0-{len(self.steps) - 1})"
            raise errors.step_out_of_order(
                f"cannot {action} {what}{exists}: the step at hand is step {current} "
                f"('{expected.name}', line {expected.line}), "
                f"{self.steps[current].status.replace('_', ' ')}",
                expected=current,
                line=expected.line,
                reported=number,
                suggestion=f"Finish step {current} first: call execute_workflow_step for its "
                f"prompt, then report_step_result with step_number={current}.",
            )
        return number

    def _check_attempts(self, target: int) -> None:
        record = self.steps[target]
        if record.attempts >= MAX_ATTEMPTS:
            raise errors.invalid_request(
                f"step {target} ('{record.name}') failed {record.attempts} times, the most "
                "attempts a step gets",
                "Stop retrying: tell the user why the step fails (get_workflow_state has every "
                "error message), or call reset_workflow to start over.",
                line=self.step(target).line,
            )

    def _reopen(self, target: int) -> None:
        """A new attempt after a failure: the failed step and the skipped ones are open again."""
        self.steps[target].status = "not_started"
        for later in self.steps[target + 1 :]:
            later.status = "not_started"
        self.status = "running"

    def _match_assertions(
        self, step: WorkflowStep, reported: list[dict[str, Any]], warnings: list[str]
    ) -> list[AssertionResult]:
        if not step.assertions:
            if reported:
                warnings.append("the step has no assertions: the assertion results were ignored")
            return []
        if len(reported) != len(step.assertions):
            first = step.assertions[min(len(reported), len(step.assertions) - 1)]
            texts = "; ".join(f"{i}. {a.text}" for i, a in enumerate(step.assertions, start=1))
            raise errors.invalid_request(
                f"step {step.number} ('{step.name}') has {len(step.assertions)} assertion(s); "
                f"the report has {len(reported)} result(s)",
                f"Report one result per assertion, in order: {texts}.",
                line=first.line,
            )
        # Matched by text when every assertion is found by its text (the model may reorder
        # them), otherwise by position.
        wanted = [_norm(resolve(a.text, self.variables)) for a in step.assertions]
        by_text = {_norm(str(r.get("assertion", ""))): r for r in reported}
        chosen = [by_text[w] for w in wanted] if all(w in by_text for w in wanted) else reported
        return [
            AssertionResult(
                assertion=resolve(spec.text, self.variables),
                passed=bool(result.get("passed")),
                detail=str(result.get("detail", "")),
                line=spec.line,
            )
            for spec, result in zip(step.assertions, chosen, strict=True)
        ]

    def _match_outputs(
        self, step: WorkflowStep, reported: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        declared = {name.upper(): name for name in step.output_variables}
        outputs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in reported.items():
            name = declared.get(key.upper())
            if name is None:
                extra[key] = value
            elif value is not None:
                outputs[name] = value
        return outputs, extra

    def _require_outputs(self, step: WorkflowStep, outputs: dict[str, Any]) -> None:
        for spec in step.outputs:
            if spec.variable not in outputs:
                raise errors.variable_missing(
                    spec.variable,
                    spec.line,
                    step=step.name,
                    when="in the report",
                    suggestion=(
                        f"Step {step.number} declares the output '{spec.source} → "
                        f"{spec.variable}'. Report it again with output_variables including "
                        f"\"{spec.variable}\" (the value you found), or with status 'failed' "
                        "if the value could not be found."
                    ),
                )

    def _log(self, now: str, event: str, step: int | None, detail: str) -> None:
        self.history.append({"at": now, "event": event, "step_number": step, "detail": detail})
        del self.history[:-HISTORY_LIMIT]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()
