"""The planner behind MCP layer 3 (``_plan(goal)``): workflow suggestion or inferred order.

Public API: :func:`plan_goal`, :class:`Plan` (``to_dict()``, ``summary``),
:class:`WorkflowSummary` and :func:`summarize_workflow`. Pure domain logic: no LLM, no I/O.
"""

from dynamic_tools.tools.planning.model import (
    Candidate,
    DataLink,
    Plan,
    PlanEdge,
    PlanStep,
    Undecided,
)
from dynamic_tools.tools.planning.planner import plan_goal
from dynamic_tools.tools.planning.workflows import MARGIN, WorkflowSummary, summarize_workflow

__all__ = [
    "MARGIN",
    "Candidate",
    "DataLink",
    "Plan",
    "PlanEdge",
    "PlanStep",
    "Undecided",
    "WorkflowSummary",
    "plan_goal",
    "summarize_workflow",
]
