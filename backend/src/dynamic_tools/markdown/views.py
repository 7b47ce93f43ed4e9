"""The plain dicts the service answers with (an MCP tool's ``structuredContent``).

Every answer carries ``session_id`` and ``next_action``: one or two sentences a model can act
on directly (which tool to call next, with which arguments).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dynamic_tools.markdown.models import WorkflowStep
from dynamic_tools.markdown.prompts import REPORT_ARGUMENTS_SCHEMA, resolve, step_prompt
from dynamic_tools.markdown.state import MAX_ATTEMPTS, SessionState


def workflow_summary(state: SessionState) -> dict[str, Any]:
    """Title, source, description and the steps in brief."""
    workflow = state.workflow
    return {
        "title": workflow.title,
        "source": workflow.source,
        "description": workflow.description,
        "step_count": len(workflow.steps),
        "steps": [
            {
                "step_number": step.number,
                "name": step.name,
                "section": step.section,
                "line": step.line,
                "tools": step.tool_names,
                "inputs": [use.name for use in step.reads],
                "outputs": step.output_variables,
                "assertion_count": len(step.assertions),
            }
            for step in workflow.steps
        ],
        "required_inputs": [use.name for use in workflow.required_inputs],
    }


def step_view(state: SessionState, step: WorkflowStep) -> dict[str, Any]:
    """Step ``step`` as it is to be executed now: the enriched prompt and what goes with it."""
    record = state.steps[step.number]
    variables = state.variables
    return {
        "session_id": state.session_id,
        "status": record.status,
        "step_number": step.number,
        "step_name": step.name,
        "total_steps": len(state.steps),
        "attempt": record.attempts,
        "line": step.line,
        "tools": step.tool_names,
        "inputs": {use.name: variables.get(use.name) for use in step.reads},
        "assertions": [resolve(a.text, variables) for a in step.assertions],
        "outputs": [{"source": o.source, "variable": o.variable} for o in step.outputs],
        "prompt": step_prompt(
            state.workflow, step, variables, session_id=state.session_id, attempt=record.attempts
        ),
        "report_schema": REPORT_ARGUMENTS_SCHEMA,
        "next_action": (
            f"Follow the prompt: call {_tools(step)}, evaluate the criteria, then call "
            f"report_step_result with session_id '{state.session_id}' and "
            f"step_number={step.number}."
        ),
    }


def completed_view(state: SessionState) -> dict[str, Any]:
    """The answer once every step passed."""
    return {
        "session_id": state.session_id,
        "status": "completed",
        "workflow_status": "completed",
        "summary": counts(state),
        "variables": state.variables,
        "next_action": (
            "The workflow is complete: every step passed. Tell the user the outcome, using the "
            "variables. get_workflow_state gives the full record; reset_workflow runs it again."
        ),
    }


def failed_next_action(state: SessionState, number: int) -> str:
    """What to do after step ``number`` failed."""
    record = state.steps[number]
    skipped = [r.number for r in state.steps[number + 1 :]]
    after = f"; steps {skipped} were skipped" if skipped else ""
    retry = (
        f" To retry it without starting over, fix the cause and call execute_workflow_step "
        f"(attempt {record.attempts + 1} of {MAX_ATTEMPTS})."
        if record.attempts < MAX_ATTEMPTS
        else f" It has had all {MAX_ATTEMPTS} attempts."
    )
    return (
        f"Step {number} ('{record.name}') failed{after}. Tell the user what failed and why."
        f"{retry} reset_workflow starts again from step 0."
    )


def state_view(state: SessionState) -> dict[str, Any]:
    """The whole session: progress, variables, and each step's outcome."""
    steps = []
    for record, step in zip(state.steps, state.workflow.steps, strict=True):
        steps.append(
            {
                "step_number": record.number,
                "name": record.name,
                "line": step.line,
                "tools": step.tool_names,
                "status": record.status,
                "attempts": record.attempts,
                "assertion_results": [r.model_dump() for r in record.assertion_results],
                "output_variables": record.output_variables,
                "error_message": record.error_message,
                "started_at": record.started_at,
                "reported_at": record.reported_at,
            }
        )
    return {
        "session_id": state.session_id,
        "workflow": workflow_summary(state),
        "workflow_status": state.status,
        "current_step": state.current,
        "counts": counts(state),
        "variables": state.variables,
        "steps": steps,
        "loaded_at": state.loaded_at,
        "updated_at": state.updated_at,
        "history": state.history[-20:],
        "next_action": state_next_action(state),
    }


def state_next_action(state: SessionState) -> str:
    """What to do next, given the session's status."""
    if state.status == "completed":
        return "The workflow is complete. Report the outcome to the user."
    current = state.current if state.current is not None else 0
    if state.status == "failed":
        return failed_next_action(state, current)
    record = state.steps[current]
    if record.status == "in_progress":
        return (
            f"Step {current} ('{record.name}') is in progress: finish it and call "
            f"report_step_result with step_number={current} (execute_workflow_step repeats "
            "its prompt)."
        )
    return f"Call execute_workflow_step to get the prompt of step {current} ('{record.name}')."


def counts(state: SessionState) -> dict[str, int]:
    """How many steps are in each status, and in all."""
    tally: Counter[str] = Counter(record.status for record in state.steps)
    names = ("passed", "failed", "skipped", "in_progress", "not_started")
    return {**{name: tally.get(name, 0) for name in names}, "total": len(state.steps)}


def _tools(step: WorkflowStep) -> str:
    names = [f"`{name}`" for name in step.tool_names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
