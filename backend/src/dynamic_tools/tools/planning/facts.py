"""What the planner reads from one tool's metadata: stage, inputs, outputs, phrases.

Lifecycle stage (docs/design-sources.md#tool-discovery-design, category and lifecycle): from
``hints.category`` when it names a
stage, else from the words of the tool's name, else ``search`` for a read-only tool:
``search`` (0) → ``validation`` (1) → ``action`` (2) → ``finalization`` (3). Compensation
(``cancel_*``, ``delete_*``, ``refund_*``… a ``compensation`` category, a DELETE method) has no
stage: it is never a step of a forward plan.

Outputs are ``hints.outputs`` plus the properties of ``output_schema`` (an object's, or an
array's items'). An output that is also one of the tool's own inputs is an echo and is not
counted as produced. The *entity* of an ``id`` output is read from that property's
description (``"Hotel booking id, e.g. HB-1"`` → ``hotel booking``) or, without one, from the
tool's name minus its leading verb (``search_flights`` → ``flight``).

Ordering phrases (approach 2) are read from the description, the hint and each parameter's
description, clause by clause (clauses end at ``. ; : ! ?``): a tool named after ``after``,
``requires``, ``from`` or ``by`` runs before this tool; after ``before``, after it; names
followed by ``need(s)`` use this tool's output; ``instead of X`` marks an alternative;
``undoes X`` marks what a compensation undoes; ``final step`` marks a terminal tool.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.planning.text import stem, tokens, words

STAGES = ("search", "validation", "action", "finalization")
_CATEGORY_STAGE = {
    **dict.fromkeys(("search", "read", "query", "lookup", "list", "discovery", "fetch"), 0),
    **dict.fromkeys(("validation", "check", "verification", "validate", "verify", "quote"), 1),
    **dict.fromkeys(("action", "booking", "write", "create", "reservation", "mutation"), 2),
    **dict.fromkeys(
        ("payment", "finalization", "confirmation", "finalize", "confirm", "checkout"), 3
    ),
}
_NAME_STAGE = {
    **dict.fromkeys(("search", "list", "get", "find", "fetch", "query", "lookup", "read"), 0),
    **dict.fromkeys(("check", "validate", "verify", "quote", "preview"), 1),
    **dict.fromkeys(("create", "book", "add", "reserve", "update", "submit", "put", "set"), 2),
    **dict.fromkeys(("pay", "payment", "confirm", "finalize", "complete", "capture"), 3),
}
COMPENSATION_WORDS = frozenset(
    ("cancel", "delete", "refund", "undo", "void", "revoke", "remove", "rollback", "compensation",
     "cancellation")
)  # fmt: skip
_CLAUSE_END = re.compile(r"[.;:!?](?:\s|$)")
_ITEM = re.compile(r"[A-Za-z0-9_\-]+")
_AFTER = {"after", "requires", "require", "required", "from", "by", "following"}
_UNDO = {"undoes", "undo", "reverses", "reverts"}
_NEED = {"need", "needs"}
_RESET = {"when", "if", "otherwise", "unless", "but"}
_CONNECTOR = {"and", "or", "calling", "using", "the", "a", "an", "of", "result", "results",
              "output", "outputs", "with", "then"}  # fmt: skip


@dataclass(frozen=True)
class Phrase:
    """An ordering phrase found in a tool's text.

    ``kind`` is ``after`` (``other`` runs first), ``before`` (``other`` runs later),
    ``instead`` (an alternative to ``other``) or ``undoes``. ``where`` names the text
    (``description``, ``hint`` or a parameter name) and ``text`` quotes the words.
    """

    kind: str
    other: str
    where: str
    text: str


@dataclass(frozen=True)
class Output:
    """One produced field; ``in_list`` when it is a property of an array's items."""

    name: str
    in_list: bool
    entity: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolFacts:
    """The planner's view of one tool."""

    name: str
    stage: int | None
    compensation: bool
    hints: ToolHints
    inputs: dict[str, bool]
    """Input name → required."""
    outputs: dict[str, Output]
    name_words: tuple[str, ...]
    phrases: tuple[Phrase, ...] = ()
    terminal: bool = False
    document: tuple[str, ...] = field(default=(), repr=False)

    @property
    def stage_label(self) -> str:
        """``search``, ``validation``, ``action``, ``finalization``, ``compensation``, ``?``."""
        if self.compensation:
            return "compensation"
        return STAGES[self.stage] if self.stage is not None else "unknown"

    @property
    def sort_stage(self) -> int:
        """The stage for ordering: unknown tools sort after every known stage."""
        return self.stage if self.stage is not None else len(STAGES)


def tool_facts(tool: ToolConfig, hints: ToolHints, tool_names: Collection[str]) -> ToolFacts:
    """Read one tool's facts.

    Args:
        tool: The tool.
        hints: Its effective hints (registry merged with header hints).
        tool_names: Every tool name the plan may mention (to find them in texts).

    Returns:
        The tool's :class:`ToolFacts`.
    """
    name_words = tuple(stem(w) for w in words(tool.name))
    compensation = _is_compensation(tool, hints, name_words)
    inputs = {name: p.required for name, p in tool.parameters.items()}
    others = [n for n in tool_names if n != tool.name]
    texts = [("description", tool.description), ("hint", hints.hint or "")]
    texts += [(n, str(p.schema_.get("description", ""))) for n, p in tool.parameters.items()]
    phrases = tuple(p for where, text in texts for p in _phrases(text, where, others))
    joined = " ".join(t for _, t in texts[:2]).lower()
    own_text = " ".join(_strip_names(t, others) for _, t in texts[:2])
    document = tokens(" ".join([tool.name, own_text, hints.category or "", *tool.parameters]))
    return ToolFacts(
        name=tool.name,
        stage=None if compensation else _stage(tool, hints, name_words),
        compensation=compensation,
        hints=hints,
        inputs=inputs,
        outputs=_outputs(tool, hints, name_words, set(inputs)),
        name_words=name_words,
        phrases=phrases,
        terminal="final step" in joined or "last step" in joined,
        document=tuple(document),
    )


def _is_compensation(tool: ToolConfig, hints: ToolHints, name_words: tuple[str, ...]) -> bool:
    category = (hints.category or "").lower()
    if category:
        return category in COMPENSATION_WORDS
    return tool.api.method == "DELETE" or bool(name_words and name_words[0] in COMPENSATION_WORDS)


def _stage(tool: ToolConfig, hints: ToolHints, name_words: tuple[str, ...]) -> int | None:
    category = stem((hints.category or "").lower())
    for key in ((hints.category or "").lower(), category):
        if key in _CATEGORY_STAGE:
            return _CATEGORY_STAGE[key]
    for word in name_words:
        if word in _NAME_STAGE:
            return _NAME_STAGE[word]
    return 0 if tool.effective_annotations.read_only else None


def _outputs(
    tool: ToolConfig, hints: ToolHints, name_words: tuple[str, ...], inputs: set[str]
) -> dict[str, Output]:
    schema = tool.output_schema or {}
    in_list = schema.get("type") == "array"
    body = schema.get("items", {}) if in_list else schema
    properties: dict[str, Any] = body.get("properties", {}) if isinstance(body, dict) else {}
    fallback = name_words[1:] if len(name_words) > 1 else name_words
    found: dict[str, Output] = {}
    for name in [*hints.outputs, *properties]:
        if name in inputs or name in found:
            continue
        entity: tuple[str, ...] = ()
        if name == "id":
            spec = properties.get("id")
            described = _entity(str(spec.get("description", ""))) if isinstance(spec, dict) else ()
            entity = described or fallback
        found[name] = Output(name, in_list, entity)
    return found


def _entity(description: str) -> tuple[str, ...]:
    """The words before ``id`` in an id's description (at most four), stemmed."""
    head = words(description)
    if "id" not in head:
        return ()
    before = head[: head.index("id")]
    return tuple(stem(w) for w in before) if 0 < len(before) <= 4 else ()


def _strip_names(text: str, names: Collection[str]) -> str:
    """``text`` without mentions of other tools (they say how tools relate, not what it does)."""
    items = _ITEM.findall(text)
    return " ".join(i for i in items if i not in names)


def _phrases(text: str, where: str, names: Collection[str]) -> list[Phrase]:
    found: list[Phrase] = []
    for clause in _CLAUSE_END.split(text):
        mode: str | None = None
        trigger = ""
        pending: list[str] = []
        for item in _ITEM.findall(clause):
            low = item.lower()
            if item in names:
                if mode is not None:
                    found.append(Phrase(mode, item, where, f"{trigger} {item}"))
                pending.append(item)
            elif low in _AFTER or low == "before" or low in _UNDO:
                mode = "after" if low in _AFTER else "before" if low == "before" else "undoes"
                trigger, pending = low, []
            elif low == "instead":
                mode, trigger, pending = "instead", "instead of", []
            elif low in _NEED:
                found.extend(Phrase("before", p, where, f"{p} {low} it") for p in pending)
                pending = []
            elif low in _RESET:
                mode, pending = None, []
            elif low not in _CONNECTOR:
                pending = []
    return found
