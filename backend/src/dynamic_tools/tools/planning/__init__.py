"""The planner behind MCP layer 3 (``_plan(goal)``): workflow suggestion or inferred order.

Each candidate workflow comes with its inputs filled from the goal.

Public API: :func:`plan_goal`, :class:`Plan` (``to_dict()``, ``summary``),
:func:`render_summary`, :class:`WorkflowSummary` and :func:`summarize_workflow`; the filling
(:func:`goal_values`, :func:`fill_params`, :func:`complete_filling`, :class:`Filling`,
:class:`Filled`). Pure domain logic: no LLM, no I/O.
"""

from dynamic_tools.tools.planning.fill import (
    Filled,
    Filling,
    GoalValue,
    complete_filling,
    fill_params,
    goal_values,
)
from dynamic_tools.tools.planning.model import (
    Candidate,
    DataLink,
    Plan,
    PlanEdge,
    PlanStep,
    Undecided,
    render_summary,
)
from dynamic_tools.tools.planning.planner import plan_goal
from dynamic_tools.tools.planning.workflows import MARGIN, WorkflowSummary, summarize_workflow

__all__ = [
    "MARGIN",
    "Candidate",
    "DataLink",
    "Filled",
    "Filling",
    "GoalValue",
    "Plan",
    "PlanEdge",
    "PlanStep",
    "Undecided",
    "WorkflowSummary",
    "complete_filling",
    "fill_params",
    "goal_values",
    "plan_goal",
    "render_summary",
    "summarize_workflow",
]
