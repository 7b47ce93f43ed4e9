"""Workflow summaries for the planner and the rule that picks a workflow for a goal.

A goal is matched against each workflow's id, description and parameter names and
descriptions with BM25 (:mod:`.text`). A goal word that occurs in no workflow and no tool is
taken as a value (an airport, a name, a date) and ignored; the others are its *known terms*.
The *competitors* are the workflows with a positive score that contain the most known terms,
provided that is at least :data:`MIN_COVERAGE` of them; when the goal's first known term (its
verb, usually: "book", "cancel", "find") is a word of some competitors' ids, only those stay.
One is *suggested* (:func:`clear_winner`) when

1. the goal *names* it — every word of its id is a known term (``book_flight`` for "book a
   flight from AMS to BCN") — and no other competitor is named with as many id words; or
2. it is the only competitor; or
3. it leads the next competitor by at least :data:`MARGIN` (score ≥ ``MARGIN`` times its score).

BM25 alone rarely separates workflows of one domain clearly (they share most words), which
is why the id and the coverage come first. Otherwise the planner infers a tool order and
lists the matching workflows as alternatives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.nodes import kind_of, tools_called
from dynamic_tools.engine.params import JSON_TYPES
from dynamic_tools.tools.planning.text import Match, rank, tokens

MARGIN = 1.5
"""How far the best competitor's score must lead the next one's to be suggested."""
MIN_COVERAGE = 2 / 3
"""Share of the goal's known terms a workflow must contain to compete at all."""


@dataclass(frozen=True)
class WorkflowSummary:
    """What the planner needs to know about one workflow (no graph, no engine types).

    Attributes:
        id: The workflow id (its MCP tool is ``w_<id>``).
        description: The workflow's description.
        params: Parameter name → ``{"type", "required", "description", "example"}`` (plus
            ``"default"``, ``"format"`` and ``"enum"`` when set); types are JSON Schema names.
        node_count: Nodes in the graph (parallel branches and a foreach step included).
        has_yield: Whether the workflow pauses for human input.
        has_compensation: Whether it declares compensation (``compensate_with`` or a
            compensate node).
        tools: The tools its calls name, in document order, without repeats.
    """

    id: str
    description: str
    params: Mapping[str, Mapping[str, Any]]
    node_count: int
    has_yield: bool = False
    has_compensation: bool = False
    tools: tuple[str, ...] = ()

    @property
    def tool(self) -> str:
        """The workflow's MCP tool name."""
        return f"w_{self.id}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``id``, ``tool``, ``description``, ``params`` and the shape flags."""
        return {
            "id": self.id,
            "tool": self.tool,
            "description": self.description,
            "params": {name: dict(spec) for name, spec in self.params.items()},
            "node_count": self.node_count,
            "has_yield": self.has_yield,
            "has_compensation": self.has_compensation,
            "tools": list(self.tools),
        }

    def document(self) -> list[str]:
        """The terms BM25 indexes: id, description, parameter names and descriptions."""
        parts = [self.id, self.description]
        for name, spec in self.params.items():
            parts.extend([name, str(spec.get("description") or "")])
        return tokens(" ".join(parts))


def summarize_workflow(workflow_id: str, workflow: Workflow) -> WorkflowSummary:
    """Summarise one workflow of a loaded :class:`~dynamic_tools.engine.models.WorkflowDocument`.

    Args:
        workflow_id: The workflow's id (its key in the document's ``workflows``).
        workflow: The engine's model of it.

    Returns:
        The summary the planner ranks and suggests.
    """
    params: dict[str, dict[str, Any]] = {}
    for name, spec in workflow.params.items():
        entry: dict[str, Any] = {
            "type": JSON_TYPES.get(spec.type, spec.type),
            "required": spec.required,
            "description": spec.description,
            "example": spec.example,
        }
        if spec.default is not None:
            entry["default"] = spec.default
        if spec.format:
            entry["format"] = spec.format
        if spec.enum:
            entry["enum"] = list(spec.enum)
        params[name] = entry
    nodes = 0
    has_yield = has_compensation = False
    for node_id, node in workflow.graph.items():
        kind = kind_of(node)
        nodes += 1 + sum(1 for path, _ in kind.steps(node) if path)
        has_yield = has_yield or kind.pause(node_id, node) is not None
        has_compensation = has_compensation or bool(kind.undo_tools(node))
    calls = tools_called(workflow.graph.values())
    return WorkflowSummary(
        id=workflow_id,
        description=workflow.description,
        params=params,
        node_count=nodes,
        has_yield=has_yield,
        has_compensation=has_compensation,
        tools=tuple(dict.fromkeys(calls)),
    )


def rank_workflows(
    goal_terms: Sequence[str], workflows: Sequence[WorkflowSummary]
) -> list[tuple[WorkflowSummary, Match]]:
    """Workflows with their match for ``goal_terms``, best first."""
    matches = rank(goal_terms, [w.document() for w in workflows])
    return [(workflows[m.index], m) for m in matches]


def clear_winner(
    ranked: Sequence[tuple[WorkflowSummary, Match]], goal_terms: Sequence[str]
) -> tuple[WorkflowSummary, Match] | None:
    """The workflow that wins clearly (see the module's rule), else None.

    Args:
        ranked: :func:`rank_workflows`'s answer, best first.
        goal_terms: The goal's known terms.
    """
    scored = [(w, m) for w, m in ranked if m.score > 0]
    if not scored:
        return None
    most = max(m.coverage for _, m in scored)
    if most < MIN_COVERAGE:
        return None
    competitors = [(w, m) for w, m in scored if m.coverage == most]
    acting = [(w, m) for w, m in competitors if goal_terms and goal_terms[0] in tokens(w.id)]
    competitors = acting or competitors
    named = [(len(set(tokens(w.id))), w, m) for w, m in competitors if _named(w, goal_terms)]
    named.sort(key=lambda item: -item[0])
    if named and (len(named) == 1 or named[0][0] > named[1][0]):
        return named[0][1], named[0][2]
    if len(competitors) == 1 or competitors[0][1].score >= MARGIN * competitors[1][1].score:
        return competitors[0]
    return None


def fit(workflow: WorkflowSummary, match: Match, goal_terms: Sequence[str]) -> float:
    """One number from 0 to 1 that orders workflows as the rule above does (the pick first).

    With ``n`` known goal terms of which the workflow contains ``k``, the fit is
    ``(k + t) / (n + 1)``: the tie-break ``t`` (below 1, so it never outweighs one more goal
    term) counts as a share of one extra term. ``t`` is what the goal *names*: 0.5 when the
    goal's verb (its first known term) is a word of the workflow's id, 0.03 per id word the
    goal names (at most 8) and 0.1 more when it names them all, then up to 0.025 of BM25
    (each part outweighs the later ones). So for "book me a flight", ``book_flight`` (0.89)
    leads ``cancel_trip`` (0.67), whose description also says "flight" and "bookings".
    """
    terms = list(dict.fromkeys(goal_terms))
    if not terms:
        return 0.0
    id_terms = set(tokens(workflow.id))
    acting = terms[0] in id_terms
    named = len(id_terms & set(terms))
    bm25 = match.score / (1 + match.score) if match.score > 0 else 0.0
    tie = 0.5 * acting + 0.03 * min(named, 8) + 0.1 * _named(workflow, terms) + 0.025 * bm25
    return round((len(match.matched) + tie) / (len(terms) + 1), 4)


def _named(workflow: WorkflowSummary, goal_terms: Sequence[str]) -> bool:
    id_terms = set(tokens(workflow.id))
    return bool(id_terms) and id_terms <= set(goal_terms)
