"""The planner's answer: a suggested workflow or an inferred tool order, with its doubts.

Every type is a frozen dataclass; :meth:`Plan.to_dict` gives the JSON an MCP tool returns
as ``structuredContent`` (the same keys for every kind, empty when they do not apply) and
:attr:`Plan.summary` the text a model reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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
    score (one part of the fit).
    """

    workflow: WorkflowSummary
    score: float
    bm25: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "tool", "description", "score", "bm25"}``."""
        w = self.workflow
        return {
            "id": w.id,
            "tool": w.tool,
            "description": w.description,
            "score": self.score,
            "bm25": self.bm25,
        }


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
            "summary": self.summary,
        }


def render_summary(plan: Plan) -> str:
    """The plan as text for a model: what to call, with what, and what stays open."""
    if plan.kind == "workflow" and plan.workflow is not None:
        w = plan.workflow
        lines = [f"Use workflow {w.tool}: {w.description}".rstrip(": ")]
        params = [_param_text(n, s) for n, s in w.params.items()]
        if params:
            lines.append("Parameters: " + "; ".join(params) + ".")
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
    return "\n".join(lines)


def _param_text(name: str, spec: Any) -> str:
    text = f"{name} ({spec.get('type')}, {'required' if spec.get('required') else 'optional'}"
    if spec.get("example") is not None:
        text += f", e.g. {spec['example']}"
    return text + ")"
