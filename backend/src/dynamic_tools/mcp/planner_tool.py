"""Layer 3: ``{prefix}_plan(goal)`` — a suggested workflow, or an inferred tool order, no LLM."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import mcp_types as types

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.errors import error_result
from dynamic_tools.mcp.results import data_result
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.planning import WorkflowSummary, plan_goal


def plan_tool(prefix: str, label: str) -> types.Tool:
    """The planner's MCP tool."""
    return types.Tool(
        name=f"{prefix}_plan",
        description=(
            f"[{label}] Plan a goal before acting, with no LLM on the server: suggests the w_* "
            "workflow that fits (with its parameters), or infers an order of this API's "
            "operations from their metadata (requires/next hints, which outputs feed which "
            "inputs, lifecycle categories, description keywords), giving the reasons for each "
            "edge and saying plainly what it cannot decide (branches, parallel work, undo)."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "goal": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What the user wants, in their words.",
                }
            },
            "required": ["goal"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )


def plan_result(
    goal: str,
    tools: Sequence[ToolConfig],
    workflows: Sequence[WorkflowSummary],
    hints: Mapping[str, ToolHints],
) -> types.CallToolResult:
    """Plan ``goal``; the plan as structured content and its summary as text."""
    try:
        plan = plan_goal(goal, tools, workflows, hints=hints)
    except InvalidInputError as exc:
        return error_result(exc)
    data = plan.to_dict()
    text = plan.summary + "\n\n" + json.dumps(data, ensure_ascii=False, indent=1, default=str)
    return data_result(data, text)
