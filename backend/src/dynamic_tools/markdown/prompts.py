r"""The enriched step prompt and the ``report_step_result`` argument schema.

A step prompt tells the model everything it needs for one step and nothing else: the step's
description with every ``[VARIABLE]`` replaced by its value, the tool(s) to call, the resolved
inputs, the success criteria to evaluate, the values to extract, and exactly how to call
``report_step_result`` (a filled-in example of the arguments, and the schema). Values are
inserted as written for strings and as compact JSON otherwise; ``\[`` becomes ``[``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dynamic_tools.markdown.models import VARIABLE_PATTERN, MarkdownWorkflow, WorkflowStep

_PLACEHOLDER = re.compile(rf"(?<!\\)\[({VARIABLE_PATTERN})\](?!\()")

REPORT_ARGUMENTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "step_number": {
            "type": "integer",
            "minimum": 0,
            "description": "The step_number given in the step's prompt (0-based).",
        },
        "status": {
            "type": "string",
            "enum": ["passed", "failed"],
            "description": "'passed' when the tools succeeded and every assertion holds; "
            "'failed' otherwise.",
        },
        "assertion_results": {
            "type": "array",
            "description": "One entry per assertion of the step, in the order given.",
            "items": {
                "type": "object",
                "properties": {
                    "assertion": {"type": "string", "description": "The assertion's text."},
                    "passed": {"type": "boolean"},
                    "detail": {
                        "type": "string",
                        "description": "What you saw that makes it pass or fail.",
                    },
                },
                "required": ["assertion", "passed"],
                "additionalProperties": False,
            },
        },
        "output_variables": {
            "type": "object",
            "description": "The step's output variables (UPPER_SNAKE_CASE names) and the values "
            "you extracted; every one of them is required when the step passed.",
            "additionalProperties": True,
        },
        "error_message": {
            "type": "string",
            "description": "Why the step failed ('' when it passed).",
        },
    },
    "required": ["step_number", "status"],
    "additionalProperties": False,
}


def render_value(value: Any) -> str:
    """A variable's value as text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def resolve(text: str, variables: dict[str, Any]) -> str:
    """``text`` with each known ``[VARIABLE]`` replaced; unknown ones are left as written."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return render_value(variables[name]) if name in variables else match.group(0)

    return _PLACEHOLDER.sub(value, text).replace("\\[", "[")


def report_example(
    step: WorkflowStep, session_id: str, variables: dict[str, Any]
) -> dict[str, Any]:
    """The ``report_step_result`` arguments for ``step``, with placeholders for the results."""
    example: dict[str, Any] = {
        "session_id": session_id,
        "step_number": step.number,
        "status": "passed",
    }
    if step.assertions:
        example["assertion_results"] = [
            {"assertion": resolve(a.text, variables), "passed": True, "detail": "<what you saw>"}
            for a in step.assertions
        ]
    if step.outputs:
        example["output_variables"] = {o.variable: f"<value of {o.source}>" for o in step.outputs}
    example["error_message"] = ""
    return example


def step_prompt(
    workflow: MarkdownWorkflow,
    step: WorkflowStep,
    variables: dict[str, Any],
    *,
    session_id: str,
    attempt: int,
) -> str:
    """The enriched prompt of ``step``, its variables resolved from ``variables``."""
    total = len(workflow.steps)
    title = f" of workflow '{workflow.title}'" if workflow.title else ""
    retry = f" (attempt {attempt})" if attempt > 1 else ""
    parts = [
        f"## Step {step.number + 1} of {total}{title}: {step.name}{retry}",
        f"step_number: {step.number}",
        "",
        "### What to do",
        resolve(step.description, variables),
        "",
        "### Tools",
    ]
    if len(step.tools) == 1:
        parts.append(f"Call the tool `{step.tools[0].name}`.")
    else:
        parts.append("Use these tools, in this order unless the description says otherwise:")
        parts.extend(f"{i}. `{tool.name}`" for i, tool in enumerate(step.tools, start=1))
    if step.reads:
        parts += ["", "### Inputs (already resolved; use these exact values)"]
        notes = {spec.name: spec.description for spec in step.inputs}
        for use in step.reads:
            note = f" — {notes[use.name]}" if notes.get(use.name) else ""
            shown = json.dumps(variables.get(use.name), ensure_ascii=False)
            parts.append(f"- {use.name} = {shown}{note}")
    if step.assertions:
        parts += ["", f"### Success criteria ({len(step.assertions)}): evaluate each one"]
        parts.extend(
            f"{i}. {resolve(a.text, variables)}" for i, a in enumerate(step.assertions, start=1)
        )
    if step.outputs:
        parts += ["", "### Values to extract from the tool results"]
        parts.extend(f"- {o.source} → report as `{o.variable}`" for o in step.outputs)
    example = json.dumps(report_example(step, session_id, variables), ensure_ascii=False, indent=2)
    parts += [
        "",
        "### Then report",
        "After calling the tool(s), call `report_step_result` with arguments like these:",
        "```json",
        example,
        "```",
        '- status is "failed" if a tool call fails or any criterion does not hold; then say why '
        "in error_message. A failed step stops the workflow (the steps after it are skipped).",
        "- assertion_results: one entry per criterion above, in order, with the text as given.",
    ]
    if step.outputs:
        parts.append(
            "- output_variables: the real values you extracted (keep JSON types: numbers as "
            "numbers); all of them are required when the step passed."
        )
    parts.append("- Do not go on to another step before reporting this one.")
    return "\n".join(parts)
