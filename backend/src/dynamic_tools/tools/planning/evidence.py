"""The dependency evidence between tools: every edge with the reasons for it.

Edge sources (docs/design-sources.md#tool-discovery-design, workflow inference):

- hints: ``B.requires`` lists A → A before B; ``A.next`` lists B → A before B.
- data: an input of B is produced by A (output → input name matching, best level wins):
  3 — A outputs a field of the input's exact name (not an echo of A's own input);
  2 — the input is ``<noun>_id`` and A outputs ``id`` whose entity is exactly the noun
  (``flight_id`` ← ``search_flights.id``, entity "flight");
  1 — one of noun and entity ends with the other (``flight_booking_id`` ← a "booking" id);
  0 — every word of the noun is in A's name (the brief's "a tool whose name contains the
  noun"). Compensation tools never produce data for a forward step.
- description: the phrases of :mod:`.facts` (``after X``, ``requires X``, ``from X``,
  ``before Y``, ``Y needs``).

Lifecycle order is not an edge source between tools that already have evidence (two
independent chains must stay independent); see :func:`lifecycle_edges`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from dynamic_tools.tools.planning.facts import STAGES, ToolFacts
from dynamic_tools.tools.planning.text import stem, words


@dataclass(frozen=True)
class DataSource:
    """Where an input's value can come from: ``producer.field`` (``in_list``: pick one)."""

    producer: str
    field: str
    level: int
    in_list: bool

    @property
    def reason(self) -> str:
        """``data: <input> ← producer.field`` is built by the caller; this is the right side."""
        return f"{self.producer}.{self.field}"


@dataclass
class Evidence:
    """All edges between the given tools, and each input's possible data sources."""

    edges: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    sources: dict[tuple[str, str], list[DataSource]] = field(default_factory=dict)
    """(consumer, input) → sources at the best level found."""
    alternatives: dict[frozenset[str], list[str]] = field(default_factory=dict)
    undoes: dict[str, list[str]] = field(default_factory=dict)
    """Compensation tool → the tools it undoes."""

    def add(self, source: str, target: str, reason: str) -> None:
        """Record ``source`` before ``target`` because of ``reason`` (no self edges)."""
        if source == target:
            return
        reasons = self.edges.setdefault((source, target), [])
        if reason not in reasons:
            reasons.append(reason)


def gather(facts: Mapping[str, ToolFacts]) -> Evidence:
    """Collect the evidence between all ``facts`` (tools not in ``facts`` are ignored)."""
    evidence = Evidence()
    for tool in facts.values():
        for dep in tool.hints.requires:
            if dep in facts:
                evidence.add(dep, tool.name, f"hints: {tool.name} requires {dep}")
        for nxt in tool.hints.next:
            if nxt in facts:
                evidence.add(tool.name, nxt, f"hints: {tool.name} next {nxt}")
        for phrase in tool.phrases:
            if phrase.other not in facts:
                continue
            where = "description" if phrase.where in ("description", "hint") else "parameter"
            said = f'{where}: {_owner(tool.name, phrase.where)} says "{phrase.text}"'
            if phrase.kind == "after":
                evidence.add(phrase.other, tool.name, said)
            elif phrase.kind == "before":
                evidence.add(tool.name, phrase.other, said)
            elif phrase.kind == "instead":
                evidence.alternatives.setdefault(frozenset((tool.name, phrase.other)), []).append(
                    said
                )
            elif phrase.kind == "undoes" and tool.compensation:
                evidence.undoes.setdefault(tool.name, []).append(phrase.other)
        for name in tool.inputs:
            found = data_sources(name, tool.name, facts)
            if found:
                evidence.sources[(tool.name, name)] = found
                for src in found:
                    evidence.add(src.producer, tool.name, f"data: {name} ← {src.reason}")
    for tool in facts.values():
        if tool.compensation and tool.name not in evidence.undoes:
            undone = [r for r in tool.hints.requires if r in facts] or [
                s.producer for (c, _), found in evidence.sources.items() if c == tool.name
                for s in found
            ]  # fmt: skip
            if undone:
                evidence.undoes[tool.name] = list(dict.fromkeys(undone))
    return evidence


def data_sources(
    input_name: str, consumer: str, facts: Mapping[str, ToolFacts]
) -> list[DataSource]:
    """The producers of ``input_name`` for ``consumer`` at the best matching level."""
    noun = _noun(input_name)
    best: list[DataSource] = []
    for producer in facts.values():
        if producer.name == consumer or producer.compensation:
            continue
        level, out_field = _match(input_name, noun, producer)
        if level < 0:
            continue
        out = producer.outputs[out_field]
        found = DataSource(producer.name, out_field, level, out.in_list)
        if not best or level > best[0].level:
            best = [found]
        elif level == best[0].level:
            best.append(found)
    return best


def _match(input_name: str, noun: tuple[str, ...], producer: ToolFacts) -> tuple[int, str]:
    if input_name in producer.outputs:
        return 3, input_name
    out = producer.outputs.get("id")
    if not noun or out is None:
        return -1, ""
    entity = out.entity
    if entity and entity == noun:
        return 2, "id"
    if entity and (noun[-len(entity) :] == entity or entity[-len(noun) :] == noun):
        return 1, "id"
    if all(w in producer.name_words for w in noun):
        return 0, "id"
    return -1, ""


def _noun(input_name: str) -> tuple[str, ...]:
    parts = words(input_name)
    if len(parts) < 2 or parts[-1] != "id":
        return ()
    return tuple(stem(w) for w in parts[:-1])


def _owner(tool: str, where: str) -> str:
    return tool if where in ("description", "hint") else f"{tool}.{where}"


def lifecycle_reason(a: ToolFacts, b: ToolFacts) -> str | None:
    """``lifecycle: <stage> before <stage>`` when ``a``'s stage precedes ``b``'s."""
    if a.stage is None or b.stage is None or a.stage >= b.stage:
        return None
    return f"lifecycle: {STAGES[a.stage]} before {STAGES[b.stage]}"


def lifecycle_edges(
    plan: list[str], facts: Mapping[str, ToolFacts], edges: Mapping[tuple[str, str], list[str]]
) -> dict[tuple[str, str], list[str]]:
    """Edges by lifecycle alone, only between plan tools that have no other edge in the plan.

    Such isolated tools are chained by stage: each one follows the isolated tools of the
    nearest earlier stage present. Tools of one stage stay unordered.
    """
    linked = {t for pair in edges for t in pair if pair[0] in plan and pair[1] in plan}
    isolated = [t for t in plan if t not in linked and facts[t].stage is not None]
    by_stage: dict[int, list[str]] = {}
    for name in isolated:
        by_stage.setdefault(facts[name].sort_stage, []).append(name)
    stages = sorted(by_stage)
    added: dict[tuple[str, str], list[str]] = {}
    for earlier, later in pairwise(stages):
        for a in by_stage[earlier]:
            for b in by_stage[later]:
                reason = lifecycle_reason(facts[a], facts[b])
                if reason:
                    added[(a, b)] = [reason]
    return added
