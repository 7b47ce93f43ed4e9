"""``plan_goal``: a workflow suggestion, or a tool order inferred from metadata — no LLM.

1. The goal's words are tokenised (:mod:`.text`); words found in no tool and no workflow, and
   the goal's date phrases (``next week``), are values and ignored. A blank goal, or one with
   no known word, plans nothing.
2. Workflows are ranked with BM25; a clear winner (:func:`.workflows.clear_winner`) is the
   answer (``kind: "workflow"``). The winner and every other matching workflow get their
   inputs from the goal's values (:mod:`.fill`): filled, missing, and the ``w_*`` call. When
   none contains :data:`.workflows.MIN_COVERAGE` of the known terms, ``no_fit`` is set.
3. Otherwise tools are ranked with BM25 over their name, description, hint, category and
   parameter names (mentions of *other* tools removed). The *relevant* tools are those
   covering the most goal terms. If the best of them is a compensation (the goal is to undo
   something) the plan is those compensations, with no prerequisites (their ids come from
   the user). Otherwise relevant forward tools are taken smallest prerequisite set first;
   each brings its prerequisites (ancestors through :mod:`.evidence` edges), unless that
   would bring tools the goal does not mention while the plan already has tools — then it
   is left out (``excluded``, e.g. ``confirm_trip`` for "book a flight").
4. Edges among the plan's tools keep all their reasons; lifecycle stage adds a reason to
   each edge it agrees with and chains plan tools that have no other edge. Cycles are broken
   (and reported); the order is topological with ties broken by stage, then name.
5. ``undecided`` lists what metadata cannot settle: branches, independent chains,
   compensation and cycles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.hints import merge_hints
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.planning.evidence import (
    Evidence,
    data_sources,
    gather,
    lifecycle_edges,
    lifecycle_reason,
)
from dynamic_tools.tools.planning.facts import ToolFacts, tool_facts
from dynamic_tools.tools.planning.fill import (
    Filling,
    GoalValue,
    date_spans,
    fill_params,
    goal_values,
)
from dynamic_tools.tools.planning.graph import (
    ancestors,
    break_cycles,
    independent_chains,
    topological_order,
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
from dynamic_tools.tools.planning.text import Match, rank, tokens
from dynamic_tools.tools.planning.workflows import (
    MIN_COVERAGE,
    WorkflowSummary,
    clear_winner,
    fit,
    rank_workflows,
)

MAX_ALTERNATIVES = 5
MAX_GOAL_CHARS = 2_000


def plan_goal(
    goal: str,
    tools: Sequence[ToolConfig],
    workflows: Sequence[WorkflowSummary],
    *,
    hints: Mapping[str, ToolHints] | None = None,
    today: date | None = None,
) -> Plan:
    """Plan ``goal`` from the tools' and workflows' metadata (deterministic, no LLM).

    Args:
        goal: What the user wants, in their words.
        tools: The tools the plan may use (the session's API tools).
        workflows: The workflows that could be suggested (:func:`summarize_workflow`).
        hints: Header hints by tool name (:func:`~dynamic_tools.tools.hints.parse_tool_hints`);
            each overrides that tool's registry hints field by field.
        today: What relative dates of the goal (``next week``) count from; default: today.

    Returns:
        The :class:`Plan`; ``kind`` is ``workflow``, ``tool_order`` or ``none``. The pick and
        every alternative carry their inputs as far as the goal gives them (:mod:`.fill`);
        ``no_fit`` says that no workflow contains :data:`.workflows.MIN_COVERAGE` of the
        goal's known terms.

    Raises:
        InvalidInputError: the goal is blank or longer than ``MAX_GOAL_CHARS``.
    """
    if not goal.strip() or len(goal) > MAX_GOAL_CHARS:
        message = "is blank" if not goal.strip() else f"is longer than {MAX_GOAL_CHARS} chars"
        raise InvalidInputError(
            f"goal {message}",
            violations=[{"path": "goal", "field": "goal", "rule": "goal", "message": message}],
        )
    names = [t.name for t in tools]
    overrides = hints or {}
    facts = {t.name: tool_facts(t, merge_hints(t, overrides.get(t.name)), names) for t in tools}
    vocabulary = {w for f in facts.values() for w in f.document}
    vocabulary |= {w for wf in workflows for w in wf.document()}
    day = today or date.today()
    values = goal_values(goal, today=day, vocabulary=vocabulary)
    known = tuple(w for w in dict.fromkeys(tokens(_without_dates(goal, day))) if w in vocabulary)
    ranked = rank_workflows(known, workflows) if known else []
    candidates = sorted(
        (
            Candidate(w, fit(w, m, known), round(m.score, 4), m.coverage, _fill(w, values, goal))
            for w, m in ranked
            if m.score > 0
        ),
        key=lambda c: -c.score,
    )
    no_fit = not any(c.coverage >= MIN_COVERAGE for c in candidates)
    winner = clear_winner(ranked, known)
    if winner is not None:  # it leads clearly (and its fit is the best: see ``fit``)
        pick = next(c for c in candidates if c.workflow is winner[0])
        others = [c for c in candidates if c is not pick]
        plan = Plan(
            goal=goal,
            kind="workflow",
            summary="",
            goal_terms=known,
            workflow=pick.workflow,
            score=pick.score,
            alternatives=tuple(others[:MAX_ALTERNATIVES]),
            fill=pick.fill,
        )
        return _with_summary(plan)
    alternatives = tuple(candidates[:MAX_ALTERNATIVES])
    fact_list = list(facts.values())
    matches = [m for m in rank(known, [f.document for f in fact_list]) if m.score > 0]
    if not known or not matches:
        plan = Plan(
            goal=goal,
            kind="none",
            summary="",
            goal_terms=known,
            alternatives=alternatives,
            no_fit=no_fit,
        )
        return _with_summary(plan)
    best = max(m.coverage for m in matches)
    relevant = {fact_list[m.index].name: m for m in matches if m.coverage == best}
    evidence = gather(facts)
    members, why, excluded = _select(relevant, facts, evidence)
    plan = _order(goal, known, members, why, excluded, facts, evidence, alternatives)
    return _with_summary(replace(plan, no_fit=no_fit))


def _without_dates(goal: str, today: date) -> str:
    """The goal with its date phrases blanked: ``next week`` is a value, not a term."""
    text = goal
    for start, end in date_spans(goal, today):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _fill(workflow: WorkflowSummary, values: list[GoalValue], goal: str) -> Filling:
    return fill_params(workflow.tool, workflow.params, values, goal)


def _select(
    relevant: Mapping[str, Match], facts: Mapping[str, ToolFacts], evidence: Evidence
) -> tuple[list[str], dict[str, str], list[tuple[str, str]]]:
    """The plan's tools, why each is there, and relevant tools left out (with why)."""
    top = next(iter(relevant))
    if facts[top].compensation:
        chosen = [n for n in relevant if facts[n].compensation]
        return chosen, dict.fromkeys(chosen, "matches the goal (undo)"), []
    forward = [n for n, f in facts.items() if not f.compensation]
    anchors = [n for n in relevant if not facts[n].compensation]
    closure = {n: ancestors(n, evidence.edges, forward) | {n} for n in anchors}
    anchors.sort(key=lambda n: (len(closure[n]), -relevant[n].score, n))
    members: list[str] = []
    why: dict[str, str] = {}
    excluded: list[tuple[str, str]] = []
    for anchor in anchors:
        new = sorted(closure[anchor] - set(members))
        off = [t for t in new if t != anchor and t not in relevant]
        if members and off:
            excluded.append((anchor, f"needs {', '.join(off)}, which the goal does not mention"))
            continue
        for name in new:
            why[name] = "matches the goal" if name in relevant else f"prerequisite of {anchor}"
        members += new
    return members, why, excluded


def _order(
    goal: str,
    known: tuple[str, ...],
    members: list[str],
    why: Mapping[str, str],
    excluded: list[tuple[str, str]],
    facts: Mapping[str, ToolFacts],
    evidence: Evidence,
    alternatives: tuple[Candidate, ...],
) -> Plan:
    edges = {
        pair: list(reasons)
        for pair, reasons in evidence.edges.items()
        if pair[0] in members and pair[1] in members
    }
    for (a, b), reasons in edges.items():
        agreed = lifecycle_reason(facts[a], facts[b])
        if agreed:
            reasons.append(agreed)
    edges.update(lifecycle_edges(members, facts, edges))
    cycles = break_cycles(members, edges, lambda n: facts[n].sort_stage)

    def key(name: str) -> tuple[int, str]:
        return (facts[name].sort_stage * 2 + int(facts[name].terminal), name)

    order = topological_order(members, edges, key)
    position = {n: i for i, n in enumerate(order)}
    steps = [_step(i + 1, n, order[:i], edges, facts, why[n]) for i, n in enumerate(order)]
    plan_edges = [
        PlanEdge(a, b, tuple(sorted(r, key=_reason_rank)))
        for (a, b), r in sorted(edges.items(), key=lambda e: (position[e[0][0]], position[e[0][1]]))
    ]
    undecided = _cycles(cycles, evidence) + _branches(order, facts, evidence)
    undecided += _parallel(order, edges) + _compensations(order, facts, evidence)
    return Plan(
        goal=goal,
        kind="tool_order",
        summary="",
        goal_terms=known,
        alternatives=alternatives,
        steps=tuple(steps),
        edges=tuple(plan_edges),
        undecided=tuple(undecided),
        excluded=tuple(excluded),
    )


_REASON_ORDER = ("hints", "data", "description", "parameter", "lifecycle")


def _reason_rank(reason: str) -> int:
    """Reasons listed hints first, then data, description, parameter text, lifecycle."""
    prefix = reason.split(":", 1)[0]
    return _REASON_ORDER.index(prefix) if prefix in _REASON_ORDER else len(_REASON_ORDER)


def _step(
    position: int,
    name: str,
    earlier: list[str],
    edges: Mapping[tuple[str, str], list[str]],
    facts: Mapping[str, ToolFacts],
    why: str,
) -> PlanStep:
    tool = facts[name]
    before = {n: facts[n] for n in earlier}
    links: list[DataLink] = []
    from_user: list[tuple[str, bool]] = []
    for input_name, required in tool.inputs.items():
        found = data_sources(input_name, name, before)
        if found:
            src = max(found, key=lambda s: earlier.index(s.producer))  # the latest producer
            links.append(DataLink(input_name, src.producer, src.field, src.in_list))
        else:
            from_user.append((input_name, required))
    return PlanStep(
        position=position,
        tool=name,
        stage=tool.stage_label,
        depends_on=tuple(n for n in earlier if (n, name) in edges),
        from_steps=tuple(links),
        from_user=tuple(from_user),
        why=why,
        terminal=tool.terminal,
    )


def _cycles(found: list[tuple[list[str], tuple[str, str]]], evidence: Evidence) -> list[Undecided]:
    out = []
    for cycle, (a, b) in found:
        reasons = tuple(evidence.edges.get((a, b), ()))
        message = (
            f"cycle: {' → '.join(cycle)}; the metadata orders these tools both ways, so "
            f"inference cannot decide (the edge {a} → {b} was set aside)"
        )
        out.append(Undecided("cycle", tuple(dict.fromkeys(cycle)), message, reasons))
    return out


def _branches(
    order: list[str], facts: Mapping[str, ToolFacts], evidence: Evidence
) -> list[Undecided]:
    out: list[Undecided] = []
    covered: set[frozenset[str]] = set()
    for name in order:
        options = [n for n in facts[name].hints.next if n in facts]
        if len(options) < 2:
            continue
        reasons = [f"hints: {name} next {', '.join(options)}"]
        for pair, said in evidence.alternatives.items():
            if pair <= set(options):
                reasons += said
                covered.add(pair)
        message = (
            f"branch: after {name}, call {' or '.join(options)}? The metadata allows either; "
            "choosing needs a business rule (a workflow branch node)"
        )
        out.append(Undecided("branch", tuple(options), message, tuple(reasons), at=name))
    for pair, said in evidence.alternatives.items():
        if pair in covered or not pair & set(order):
            continue
        options = sorted(pair)
        message = f"branch: {' or '.join(options)} are alternatives; choosing needs a business rule"
        out.append(Undecided("branch", tuple(options), message, tuple(said)))
    return out


def _parallel(order: list[str], edges: Mapping[tuple[str, str], list[str]]) -> list[Undecided]:
    out = []
    for chains, join in independent_chains(order, edges):
        heads = " and ".join("…".join(dict.fromkeys((c[0], c[-1]))) for c in chains)
        then = f", then {join} joins them" if join else ""
        message = f"parallel: no data dependency between {heads}; order is arbitrary{then}"
        tools = tuple(t for c in chains for t in c)
        out.append(
            Undecided("parallel", tools, message, at=join, chains=tuple(tuple(c) for c in chains))
        )
    return out


def _compensations(
    order: list[str], facts: Mapping[str, ToolFacts], evidence: Evidence
) -> list[Undecided]:
    out = []
    for comp, undone in sorted(evidence.undoes.items()):
        if comp in order:
            continue
        for target in undone:
            if target in order and not facts[target].compensation:
                message = (
                    f"compensation: {comp} undoes {target}; inference cannot tell when to undo; "
                    "use a workflow with compensate_with"
                )
                out.append(
                    Undecided(
                        "compensation",
                        (comp, target),
                        message,
                        (f"{comp} undoes {target}",),
                        at=target,
                    )
                )
    return out


def _with_summary(plan: Plan) -> Plan:
    return replace(plan, summary=render_summary(plan))
