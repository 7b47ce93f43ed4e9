"""The planner's answer: a suggested workflow or an inferred tool order, with its doubts.

Every type is a frozen dataclass; :meth:`Plan.to_dict` gives the JSON an MCP tool returns
as ``structuredContent`` (the same keys for every kind, empty when they do not apply) and
:attr:`Plan.summary` the text a model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dynamic_tools.tools.planning.fill import Filling
from dynamic_tools.tools.planning.workflows import WorkflowSummary

PlanKind = Literal["workflow", "tool_order", "none"]
UndecidedKind = Literal["branch", "parallel", "compensation", "cycle"]


@dataclass(frozen=True)
class DataLink:
    """An input filled from an earlier step's output (``pick_one``: the output is a list)."""

    input: str
    producer: str
    field: str
    pick_one: bool

    def to_dict(self) -> dict[str, Any]:
        """``{"input", "from", "field", "pick_one"}``."""
        return {
            "input": self.input,
            "from": self.producer,
            "field": self.field,
            "pick_one": self.pick_one,
        }


@dataclass(frozen=True)
class PlanStep:
    """One tool of an inferred order."""

    position: int
    tool: str
    stage: str
    depends_on: tuple[str, ...]
    from_steps: tuple[DataLink, ...]
    from_user: tuple[tuple[str, bool], ...]
    """(input name, required) for inputs no earlier step provides."""
    why: str
    terminal: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready step."""
        return {
            "position": self.position,
            "tool": self.tool,
            "stage": self.stage,
            "depends_on": list(self.depends_on),
            "inputs_from_steps": [link.to_dict() for link in self.from_steps],
            "inputs_from_user": [{"name": n, "required": r} for n, r in self.from_user],
            "why": self.why,
            "terminal": self.terminal,
        }


@dataclass(frozen=True)
class PlanEdge:
    """``source`` runs before ``target``, for ``reasons``."""

    source: str
    target: str
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"from", "to", "reasons"}``."""
        return {"from": self.source, "to": self.target, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Undecided:
    """Something tool metadata cannot decide; ``message`` says what and what to do."""

    kind: UndecidedKind
    tools: tuple[str, ...]
    message: str
    reasons: tuple[str, ...] = ()
    at: str | None = None
    chains: tuple[tuple[str, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready entry (``chains`` only for ``parallel``)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "tools": list(self.tools),
            "at": self.at,
            "message": self.message,
            "reasons": list(self.reasons),
        }
        if self.kind == "parallel":
            out["chains"] = [list(c) for c in self.chains]
        return out


@dataclass(frozen=True)
class Candidate:
    """A workflow that matched the goal.

    ``score`` is its fit (what orders candidates: the pick has the highest), ``bm25`` its BM25
    score (one part of the fit), ``coverage`` the share of the goal's known terms it contains,
    ``fill`` its inputs as far as the goal gives them.
    """

    workflow: WorkflowSummary
    score: float
    bm25: float = 0.0
    coverage: float = 0.0
    fill: Filling | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "tool", "description", "score", "bm25", "coverage"}`` and the fill's keys.

        The fill's keys: ``filled``, ``missing``, ``call``, ``ready``, ``filled_by``, ``notes``.
        """
        w = self.workflow
        out: dict[str, Any] = {
            "id": w.id,
            "tool": w.tool,
            "description": w.description,
            "score": self.score,
            "bm25": self.bm25,
            "coverage": round(self.coverage, 4),
        }
        return out | _fill_dict(self.fill)


@dataclass(frozen=True)
class Plan:
    """What :func:`~dynamic_tools.tools.planning.plan_goal` answers."""

    goal: str
    kind: PlanKind
    summary: str
    goal_terms: tuple[str, ...] = ()
    workflow: WorkflowSummary | None = None
    score: float | None = None
    alternatives: tuple[Candidate, ...] = ()
    steps: tuple[PlanStep, ...] = ()
    edges: tuple[PlanEdge, ...] = ()
    undecided: tuple[Undecided, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()
    """(tool, reason) for tools that matched the goal but were left out."""
    fill: Filling | None = None
    """The pick's inputs as far as the goal gives them (``kind == "workflow"``)."""
    no_fit: bool = False
    """No workflow contains enough of the goal's terms (see :data:`.workflows.MIN_COVERAGE`)."""
    draft: Mapping[str, Any] | None = None
    """A workflow drafted for a goal no workflow fits (set by the MCP layer, which has the LLM)."""

    @property
    def order(self) -> list[str]:
        """The tools of ``steps`` in order."""
        return [s.tool for s in self.steps]

    def to_dict(self) -> dict[str, Any]:
        """The JSON for ``structuredContent``: the same keys for every ``kind``."""
        return {
            "kind": self.kind,
            "goal": self.goal,
            "goal_terms": list(self.goal_terms),
            "workflow": self.workflow.to_dict() if self.workflow else None,
            "score": self.score,
            "alternatives": [c.to_dict() for c in self.alternatives],
            "steps": [s.to_dict() for s in self.steps],
            "edges": [e.to_dict() for e in self.edges],
            "undecided": [u.to_dict() for u in self.undecided],
            "excluded": [{"tool": t, "reason": r} for t, r in self.excluded],
            **_fill_dict(self.fill if self.kind == "workflow" else None),
            "no_fit": self.no_fit,
            "draft": dict(self.draft) if self.draft is not None else None,
            "summary": self.summary,
        }


def _fill_dict(fill: Filling | None) -> dict[str, Any]:
    if fill is None:
        return {"filled": {}, "missing": [], "call": None, "ready": False, "filled_by": None,
                "notes": []}  # fmt: skip
    return fill.to_dict()


def render_summary(plan: Plan) -> str:
    """The plan as text for a model: what to call, with what, and what stays open."""
    if plan.kind == "workflow" and plan.workflow is not None:
        w = plan.workflow
        lines = [f"Use workflow {w.tool}: {w.description}".rstrip(": ")]
        params = [_param_text(n, s) for n, s in w.params.items()]
        if params:
            lines.append("Parameters: " + "; ".join(params) + ".")
        if plan.fill is not None:
            lines += _fill_lines(plan.fill)
        if w.has_yield:
            lines.append("It pauses for your input; answer with workflow.resume.")
    elif plan.kind == "tool_order":
        lines = ["No workflow fits the goal clearly; tool order inferred from tool metadata:"]
        for step in plan.steps:
            parts = [f"{link.input} ← {link.producer}.{link.field}" for link in step.from_steps]
            parts += [
                f"{n} from the user" + ("" if r else " (optional)") for n, r in step.from_user
            ]
            inputs = f" ({'; '.join(parts)})" if parts else ""
            lines.append(f"{step.position}. {step.tool}{inputs}")
        if plan.undecided:
            lines.append("Not decided by inference:")
            lines += [f"- {u.message}" for u in plan.undecided]
        if plan.excluded:
            lines.append("Left out: " + "; ".join(f"{t} ({r})" for t, r in plan.excluded) + ".")
    else:
        lines = [
            f"Nothing matches the goal '{plan.goal}': none of its words occurs in a tool or "
            "workflow. Rephrase it with the API's words, or read the tool list."
        ]
    others = [c.workflow.tool for c in plan.alternatives]
    if others:
        lines.append("Other matching workflows: " + ", ".join(others) + ".")
    if plan.no_fit:
        lines.append("No workflow fits the goal.")
        if plan.draft is not None:
            lines.append(str(plan.draft.get("message", "")))
    return "\n".join(line for line in lines if line)


def _fill_lines(fill: Filling) -> list[str]:
    lines = []
    if fill.filled:
        given = [
            f"{n}={f.value!r} ({f.source}" + (f": '{f.text}')" if f.text else ")")
            for n, f in fill.filled.items()
        ]
        lines.append("From the goal: " + "; ".join(given) + ".")
    if fill.missing:
        lines.append("Still needed: " + ", ".join(fill.missing) + ".")
    else:
        args = ", ".join(f"{k}={v!r}" for k, v in fill.call["arguments"].items())
        lines.append(f"Ready to call: {fill.tool}({args}).")
    return lines


def _param_text(name: str, spec: Any) -> str:
    text = f"{name} ({spec.get('type')}, {'required' if spec.get('required') else 'optional'}"
    if spec.get("example") is not None:
        text += f", e.g. {spec['example']}"
    return text + ")"
