"""Layer 3: ``{prefix}_plan(goal)``: a workflow with its inputs, an order, or a draft.

The answer is a suggested workflow with its inputs filled from the goal, an inferred tool
order, or a drafted workflow when none fits.

The planner itself (:func:`~dynamic_tools.tools.planning.plan_goal`) needs no LLM: it ranks
the workflows, infers an order, and fills each candidate's inputs from the goal's words
(:mod:`dynamic_tools.tools.planning.fill`). This layer adds what needs a model, when the
server has one configured:

- the inputs of the best ``FILL_WITH_LLM`` workflows are asked of the LLM as one function
  call per workflow (the ``w_*`` tool's input schema, nothing required), each value checked
  against its param's schema; values the model leaves out may still come from the goal's
  text, and a model that fails leaves the text's values (``notes`` say so);
- when no workflow fits the goal, a workflow is drafted with the authoring job's drafting
  (MCP sampling when the client offers it, else the server's LLM; validated and repaired,
  never saved) and returned with its violations and the ``workflow.save`` call that saves
  it. Without a model, ``draft`` says that drafting needs one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any, Protocol

import jsonschema
import mcp_types as types

from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.errors import ConfigurationError, DynamicToolsError, InvalidInputError
from dynamic_tools.mcp.entries import ToolCall
from dynamic_tools.mcp.errors import error_result
from dynamic_tools.mcp.results import data_result
from dynamic_tools.selection.function_schema import FunctionSpec
from dynamic_tools.selection.llm import LLMClient
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.planning import (
    Filled,
    Filling,
    Plan,
    WorkflowSummary,
    complete_filling,
    fill_params,
    goal_values,
    plan_goal,
    render_summary,
    summarize_workflow,
)

FILL_WITH_LLM = 3
"""How many of the best workflows the LLM fills (the pick first), one call each."""
_FILL_PROMPT = (
    "You fill in the inputs of a workflow from what a user asked. Call the function once with "
    "only the values the request states or clearly implies (a relative date such as 'next "
    "week' as an ISO date counted from today, {today}). Leave out every input the request "
    "does not give: never invent a name, an id, a date or a number."
)


class Drafter(Protocol):
    """The authoring job's drafting (``TaskFlows.draft_valid``)."""

    async def draft_valid(
        self, call: ToolCall, goal: str, constraints: str = "", *, job: Any = None
    ) -> str:
        """A validated workflow document for ``goal``; nothing saved."""
        ...


def plan_tool(prefix: str, label: str) -> types.Tool:
    """The planner's MCP tool."""
    return types.Tool(
        name=f"{prefix}_plan",
        description=(
            f"[{label}] Plan a goal before acting: suggests the w_* workflow that fits with "
            "its inputs taken from the goal (filled, missing, and a ready call), or infers an "
            "order of this API's operations from their metadata (requires/next hints, which "
            "outputs feed which inputs, lifecycle categories, description keywords), giving "
            "the reasons for each edge and saying plainly what it cannot decide (branches, "
            "parallel work, undo). When no workflow fits, it drafts one (validated, not "
            "saved) that workflow.save can save."
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


class GoalPlanner:
    """The planner tool's handler parts that need the server: the LLM and the drafting."""

    def __init__(
        self,
        llm: LLMClient | None,
        drafter: Drafter | None = None,
        workflows: WorkflowRepository | None = None,
    ) -> None:
        self.llm = llm
        self.drafter = drafter
        self.workflows = workflows

    async def result(
        self,
        call: ToolCall,
        tools: Sequence[ToolConfig],
        summaries: Sequence[WorkflowSummary],
        schemas: Mapping[str, Mapping[str, Any]],
        hints: Mapping[str, ToolHints],
        *,
        today: date | None = None,
    ) -> types.CallToolResult:
        """Plan the call's goal; the plan as structured content and its summary as text.

        Args:
            call: The ``{prefix}_plan`` call.
            tools: The session's API tools.
            summaries: Its workflows (:func:`summarize_workflow`).
            schemas: Each workflow's ``w_*`` input schema by workflow id.
            hints: Header hints by tool name.
            today: What relative dates count from; default: today.
        """
        goal = str(call.arguments.get("goal", ""))
        day = today or date.today()
        try:
            plan = plan_goal(goal, tools, summaries, hints=hints, today=day)
        except InvalidInputError as exc:
            return error_result(exc)
        if self.llm is not None and not plan.no_fit:
            plan = await self._fill_with_llm(plan, schemas, day)
        if plan.no_fit:
            plan = replace(plan, draft=await self._draft(call, goal, day))
        plan = replace(plan, summary=render_summary(plan))
        data = plan.to_dict()
        text = plan.summary + "\n\n" + json.dumps(data, ensure_ascii=False, indent=1, default=str)
        return data_result(data, text)

    # --- inputs by the LLM ---------------------------------------------------------------------
    async def _fill_with_llm(
        self, plan: Plan, schemas: Mapping[str, Mapping[str, Any]], today: date
    ) -> Plan:
        alternatives = list(plan.alternatives)
        budget = FILL_WITH_LLM
        pick = plan.fill
        if plan.workflow is not None and plan.fill is not None:
            pick = await self._llm_filling(plan, plan.workflow, plan.fill, schemas, today)
            budget -= 1
        for i, candidate in enumerate(alternatives[:budget]):
            if candidate.fill is not None:
                filled = await self._llm_filling(
                    plan, candidate.workflow, candidate.fill, schemas, today
                )
                alternatives[i] = replace(candidate, fill=filled)
        return replace(plan, fill=pick, alternatives=tuple(alternatives))

    async def _llm_filling(
        self,
        plan: Plan,
        workflow: WorkflowSummary,
        from_text: Filling,
        schemas: Mapping[str, Mapping[str, Any]],
        today: date,
    ) -> Filling:
        assert self.llm is not None
        schema = dict(schemas.get(workflow.id) or {"type": "object", "properties": {}})
        properties: dict[str, Any] = dict(schema.get("properties") or {})
        offered = {k: v for k, v in schema.items() if k != "required"}
        function = FunctionSpec(workflow.tool, workflow.description, offered, strict=False)
        messages = [
            {"role": "system", "content": _FILL_PROMPT.format(today=today.isoformat())},
            {"role": "user", "content": plan.goal},
        ]
        try:
            answer = await self.llm.choose(messages, [function])
        except DynamicToolsError as exc:
            return _with_note(from_text, f"the LLM could not fill the inputs ({exc.message})")
        chosen = next((c for c in answer.tool_calls if c.name == workflow.tool), None)
        if chosen is None:
            return _with_note(from_text, "the LLM did not call the workflow's function")
        try:
            given = json.loads(chosen.arguments or "{}")
        except ValueError:
            given = None
        if not isinstance(given, dict):
            return _with_note(from_text, "the LLM's arguments were not a JSON object")
        filled: dict[str, Filled] = {}
        notes: list[str] = []
        checker = jsonschema.FormatChecker()
        for name, value in given.items():
            if name not in properties:
                notes.append(f"the LLM gave '{name}', which is not an input; left out")
                continue
            if value is None:
                continue
            errors = list(
                jsonschema.Draft202012Validator(
                    properties[name], format_checker=checker
                ).iter_errors(value)
            )
            if errors:
                notes.append(
                    f"the LLM's {name}={value!r} is invalid ({errors[0].message}); left out"
                )
                continue
            filled[name] = Filled(value, "llm")
        for name, value in from_text.filled.items():
            if name not in filled and value.source == "goal":
                filled[name] = value
        return complete_filling(
            workflow.tool, workflow.params, filled, filled_by="llm", notes=tuple(notes)
        )

    # --- a draft when nothing fits ---------------------------------------------------------------
    async def _draft(self, call: ToolCall, goal: str, today: date) -> dict[str, Any]:
        if self.drafter is None:
            return {
                "drafted": False,
                "message": "No workflow fits, and this session cannot draft one.",
            }
        try:
            content = await self.drafter.draft_valid(call, goal)
        except ConfigurationError as exc:
            return {
                "drafted": False,
                "message": "No workflow fits, and drafting one needs an LLM: " + exc.message,
                "error": exc.to_dict(),
            }
        except DynamicToolsError as exc:
            return {
                "drafted": False,
                "message": f"No workflow fits, and drafting one failed: {exc.message}",
                "error": exc.to_dict(),
            }
        loaded = load_document(content)
        violations = await self.workflows.check(content) if self.workflows is not None else []
        ids = list(loaded.document.workflows)
        first = summarize_workflow(ids[0], loaded.document.workflows[ids[0]])
        saved = set(self.workflows.definitions()) if self.workflows is not None else set()
        clashes = [w for w in ids if w in saved]
        values = goal_values(goal, today=today, vocabulary=first.document())
        filling = fill_params(first.tool, first.params, values, goal)  # its inputs from the goal
        message = (
            f"Drafted workflow {first.id} (validated, not saved): save it with workflow.save "
            f"(arguments in draft.save), then call {first.tool}."
        )
        if clashes:
            message += f" A saved workflow already has the id {', '.join(clashes)}: rename it."
        return {
            "drafted": True,
            "saved": False,
            "message": message,
            "content": content,
            "format": loaded.format,
            "workflows": ids,
            "workflow": first.to_dict(),
            "violations": violations,
            "save": {"tool": "workflow.save", "arguments": {"content": content}},
            "inputs": filling.to_dict(),
        }


def _with_note(filling: Filling, note: str) -> Filling:
    return replace(filling, notes=(*filling.notes, note + "; the inputs come from the goal text"))
