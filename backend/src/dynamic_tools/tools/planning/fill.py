"""Filling a workflow's inputs from the goal's words, with no LLM.

The goal's *values* are read first (:func:`goal_values`), each with where in the goal it was
found:

- dates: ``2026-12-03``, ``3 December``/``December 3``, ``today``, ``tomorrow``, ``the day
  after tomorrow``, ``next week`` (7 days from today), ``in 3 days``/``in 2 weeks``,
  ``on Friday``/``next Friday`` (the next such day after today) — all as ISO dates relative to
  ``today``;
- places: the word(s) after ``from`` (role ``from``), ``to`` (``to``), ``in``/``at``
  (``in``) — a capitalised name (``Paris``, ``New York``), an upper-case code (``NYC``), or,
  after ``from`` and in ``from x to y``, a lower-case word no tool or workflow uses (``want
  to fly`` is no place); ``AMS to BCN`` makes AMS a ``from`` place; two codes with no
  preposition are ``from`` then ``to``;
- people: a capitalised name after ``for`` (``for John Smith``);
- numbers with the noun after them (``2 passengers``, ``three nights``).

Each param of a workflow then takes the value its description allows (:func:`fill_params`):

1. a param with an ``enum`` takes a goal word equal to one of its values (case ignored), and
   nothing else; a place-like or person-like one (rules 4 and 5) takes the value of its role
   only when that is one of the enum's values;
2. a ``format: date`` param (or a string one with no format whose name says date, day,
   check-in, check-out, return) takes the goal's dates in order (``checkin`` the first,
   ``checkout`` the second); a ``date-time`` param is left to the user (no time was said);
3. an integer or number param takes a number whose noun is a word of the param's name or
   description (``passengers`` ← ``2 passengers``);
4. a string param takes a place by its role, read from its name, else its description:
   origin-like (``origin``, ``from``, ``source``, ``departure``…) ← ``from``;
   destination-like (``destination``, ``to``, ``arrival``…) ← ``to``, else ``in``;
   place-like (``city``, ``location``, ``airport``…) ← ``in``, else ``to``. The name is
   passed through as written: the planner never translates a city into a code (an
   ``enum`` of codes simply stays unfilled; a name given where the param's example is a
   code gets a note);
5. a person-like param (``passenger``, ``guest``, ``name``…) takes the name after ``for``;
6. a param still without a value takes its ``default``.

What stays unfilled and is required is *missing*. The call is ``{"name": "w_<id>",
"arguments": …}`` with what was filled; it is ready when nothing is missing.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

from dynamic_tools.tools.planning.text import stem, words

Source = Literal["goal", "llm", "default"]
ValueKind = Literal["date", "place", "person", "number"]

_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "a": 1, "an": 1,
}  # fmt: skip
_DATE_WORDS = {"today", "tomorrow", "tonight", "week", "weeks", "day", "days", "next", "after"}
_DATE_WORDS |= set(_WEEKDAYS) | set(_MONTHS)
_PREPOSITIONS = {"from": "from", "to": "to", "in": "in", "at": "in", "into": "to"}
_SMALL = {"a", "an", "the", "my", "our", "me", "us", "and", "or", "of", "on", "for", "with",
          "there", "here", "it", "them", "this", "that", "now", "then"}  # fmt: skip
_ORIGIN = {"origin", "from", "source", "departure", "depart", "start", "departing", "leaving"}
_DESTINATION = {"destination", "dest", "to", "arrival", "arrive", "target", "arriving", "going"}
_PLACE = {"city", "location", "place", "airport", "country", "region", "town", "where"}
_PERSON = {"passenger", "guest", "name", "traveler", "traveller", "customer", "person", "who"}
_DATE_NAMES = {"date", "day", "checkin", "checkout", "return", "when"}
_CODE = re.compile(r"^[A-Z]{3}$")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d{4}-\d{2}-\d{2}|\d+")


@dataclass(frozen=True)
class GoalValue:
    """A value read from the goal.

    ``text`` is the goal's words, ``role`` its preposition (``from``/``to``/``in`` for a
    place) or noun (for a number), ``span`` where it is.
    """

    kind: ValueKind
    value: Any
    text: str
    role: str = ""
    span: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Filled:
    """One input's value and where it came from (``goal`` text, the ``llm``, a ``default``)."""

    value: Any
    source: Source
    text: str = ""
    """The goal's words it was read from (``goal``)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "source"}`` plus ``"text"`` for a value read from the goal."""
        out: dict[str, Any] = {"value": self.value, "source": self.source}
        if self.text:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class Filling:
    """A workflow's inputs as far as the goal gives them, and the ``w_*`` call they make."""

    tool: str
    filled: Mapping[str, Filled]
    missing: tuple[str, ...]
    filled_by: str = "goal text"
    """``goal text`` or ``llm`` (then values the model left out may still come from the text)."""
    notes: tuple[str, ...] = field(default=())

    @property
    def ready(self) -> bool:
        """Whether the call has every required input."""
        return not self.missing

    @property
    def call(self) -> dict[str, Any]:
        """``{"name": "w_<id>", "arguments": {...}}`` with the values filled so far."""
        return {"name": self.tool, "arguments": {n: f.value for n, f in self.filled.items()}}

    def to_dict(self) -> dict[str, Any]:
        """``filled``, ``missing``, ``call``, ``ready``, ``filled_by`` and ``notes``."""
        return {
            "filled": {n: f.to_dict() for n, f in self.filled.items()},
            "missing": list(self.missing),
            "call": self.call,
            "ready": self.ready,
            "filled_by": self.filled_by,
            "notes": list(self.notes),
        }


def goal_values(
    goal: str, *, today: date, vocabulary: Collection[str] = frozenset()
) -> list[GoalValue]:
    """The dates, places, people and counted numbers of ``goal``, in the goal's order.

    Args:
        goal: The user's words.
        today: What relative dates count from.
        vocabulary: Terms of the tools and workflows (:func:`.text.tokens` form): a lower-case
            word after ``from`` (or ``to`` in ``from x to y``) is a place only when it is not
            one of them.
    """
    found = _dates(goal, today)
    taken = [v.span for v in found]
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(goal)]
    free = [t for t in tokens if not _inside(t[1], taken)]
    found += _numbers(free)
    taken += [v.span for v in found if v.kind == "number"]
    free = [t for t in tokens if not _inside(t[1], taken)]
    found += _places_and_people(goal, free, vocabulary)
    return sorted(found, key=lambda v: v.span)


def date_spans(goal: str, today: date) -> list[tuple[int, int]]:
    """Where ``goal`` states dates (the planner drops these words from the goal's terms)."""
    return [v.span for v in _dates(goal, today)]


def fill_params(
    tool: str,
    params: Mapping[str, Mapping[str, Any]],
    values: list[GoalValue],
    goal: str,
) -> Filling:
    """The inputs of one workflow taken from ``values`` (see the module's rules).

    Args:
        tool: The workflow's ``w_*`` tool name.
        params: Its params as :class:`~.workflows.WorkflowSummary` gives them (``type``,
            ``required``, ``description``, ``example``, ``default``, ``format``, ``enum``).
        values: :func:`goal_values` of the goal.
        goal: The goal itself (for enum words).
    """
    filled: dict[str, Filled] = {}
    notes: list[str] = []
    dates = [v for v in values if v.kind == "date"]
    date_params = [n for n, s in params.items() if _is_date_param(n, s)]
    for name, value in zip(date_params, dates, strict=False):
        if not params[name].get("enum"):
            filled[name] = Filled(value.value, "goal", value.text)
    for name, spec in params.items():
        if name in filled:
            continue
        enum = spec.get("enum")
        if enum and _role(name, spec) in ("from", "to", "in", "person"):
            found = _value_for(name, spec, values)  # a place's role decides, then the enum
            hit = next(
                (e for e in enum if found and str(e).casefold() == found.text.casefold()), None
            )
            if found is not None and hit is not None:
                filled[name] = Filled(hit, "goal", found.text)
            continue
        if enum:
            hit = _enum_phrase(enum, goal)
            if hit is not None:
                filled[name] = Filled(hit, "goal", str(hit))
            continue
        found = _value_for(name, spec, values)
        if found is not None:
            filled[name] = Filled(found.value, "goal", found.text)
            example = spec.get("example")
            if isinstance(example, str) and _CODE.match(example) and not _CODE.match(found.text):
                notes.append(
                    f"{name}: '{found.text}' is passed as written, while its example "
                    f"'{example}' is a code; give the code if the API needs one"
                )
    return complete_filling(tool, params, filled, notes=tuple(notes))


def complete_filling(
    tool: str,
    params: Mapping[str, Mapping[str, Any]],
    filled: Mapping[str, Filled],
    *,
    filled_by: str = "goal text",
    notes: tuple[str, ...] = (),
) -> Filling:
    """``filled`` with defaults added, in the params' order, and what is still missing."""
    out: dict[str, Filled] = {}
    for name, spec in params.items():
        if name in filled:
            out[name] = filled[name]
        elif spec.get("default") is not None:
            out[name] = Filled(spec["default"], "default")
    missing = tuple(n for n, s in params.items() if s.get("required") and n not in out)
    return Filling(tool, out, missing, filled_by, notes)


# --- reading the goal ------------------------------------------------------------------------
def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= position < b for a, b in spans)


def _dates(goal: str, today: date) -> list[GoalValue]:
    found: list[GoalValue] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match[str], day: date | None) -> None:
        if day is None or _inside(match.start(), taken):
            return
        taken.append(match.span())
        found.append(GoalValue("date", day.isoformat(), match.group().strip(), "", match.span()))

    text = goal.lower()
    months = "|".join(sorted(_MONTHS, key=len, reverse=True))
    weekdays = "|".join(_WEEKDAYS)
    patterns: list[tuple[str, Any]] = [
        (r"\b(\d{4})-(\d{2})-(\d{2})\b", lambda m: _iso(m.group(1), m.group(2), m.group(3))),
        (rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({months})\b\.?(?:\s+(\d{{4}}))?",
         lambda m: _day_month(int(m.group(1)), m.group(2), m.group(3), today)),
        (rf"\b({months})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?",
         lambda m: _day_month(int(m.group(2)), m.group(1), m.group(3), today)),
        (r"\b(?:the\s+)?day after tomorrow\b", lambda m: today + timedelta(days=2)),
        (r"\btomorrow\b", lambda m: today + timedelta(days=1)),
        (r"\b(?:today|tonight)\b", lambda m: today),
        (r"\bnext week\b", lambda m: today + timedelta(days=7)),
        (r"\bin (\d+|one|two|three|four|five|six|seven|eight|nine|ten|a) (day|week)s?\b",
         lambda m: today + timedelta(days=_count(m.group(1)) * (7 if m.group(2) == "week" else 1))),
        (rf"\b(?:next|on|this|coming)\s+({weekdays})\b", lambda m: _weekday(m.group(1), today)),
    ]  # fmt: skip
    for pattern, make in patterns:
        for match in re.finditer(pattern, text):
            add(match, make(match))
    return sorted(found, key=lambda v: v.span)


def _iso(year: str, month: str, day: str) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


def _day_month(day: int, month: str, year: str | None, today: date) -> date | None:
    number = _MONTHS[month.lower()]
    try:
        found = date(int(year) if year else today.year, number, day)
    except ValueError:
        return None
    if not year and found < today:  # "3 December" said in January means this year's; past: next
        found = found.replace(year=found.year + 1)
    return found


def _weekday(name: str, today: date) -> date:
    ahead = (_WEEKDAYS[name] - today.weekday()) % 7 or 7
    return today + timedelta(days=ahead)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _numbers(tokens: list[tuple[str, int, int]]) -> list[GoalValue]:
    found = []
    for i, (word, start, _) in enumerate(tokens):
        low = word.lower()
        if not (low.isdigit() or (low in _NUMBER_WORDS and low not in ("a", "an"))):
            continue
        if i + 1 >= len(tokens) or not tokens[i + 1][0].isalpha():
            continue
        noun = tokens[i + 1][0].lower()
        if noun in _MONTHS:
            continue
        value = _count(low)
        span = (start, tokens[i + 1][2])
        found.append(GoalValue("number", value, f"{word} {tokens[i + 1][0]}", stem(noun), span))
    return found


def _places_and_people(
    goal: str, tokens: list[tuple[str, int, int]], vocabulary: Collection[str]
) -> list[GoalValue]:
    found: list[GoalValue] = []
    used: set[int] = set()
    for i, (word, _, _) in enumerate(tokens):
        low = word.lower()
        if low not in _PREPOSITIONS and low != "for":
            continue
        # a lower-case word is a place after "from", and after "to" only in "from X to y":
        # "want to fly", "need to cancel" are verbs
        after_from = low == "to" and bool(found) and found[-1].span[1] == tokens[i - 1][2]
        lower_ok = low == "from" or (after_from and found[-1].role == "from")
        name = _name_after(tokens, i + 1, allow_lower=lower_ok, vocab=vocabulary)
        if name is None:
            continue
        first, last = name
        text = goal[tokens[first][1] : tokens[last][2]]
        span = (tokens[first][1], tokens[last][2])
        if low == "for":
            if tokens[first][0][0].isupper() and not _CODE.match(tokens[first][0]):
                found.append(GoalValue("person", text, text, "", span))
                used.update(range(first, last + 1))
            continue
        role = _PREPOSITIONS[low]
        if role == "to" and i > 0 and i - 1 not in used:
            before = _name_before(tokens, i - 1)
            if before is not None and not any(v.role == "from" for v in found):
                b0, b1 = before
                found.append(
                    GoalValue(
                        "place",
                        goal[tokens[b0][1] : tokens[b1][2]],
                        goal[tokens[b0][1] : tokens[b1][2]],
                        "from",
                        (tokens[b0][1], tokens[b1][2]),
                    )
                )
                used.update(range(b0, b1 + 1))
        found.append(GoalValue("place", text, text, role, span))
        used.update(range(first, last + 1))
    codes = [(w, s, e) for j, (w, s, e) in enumerate(tokens) if j not in used and _CODE.match(w)]
    if not any(v.kind == "place" for v in found) and len(codes) == 2:
        for (word, start, end), role in zip(codes, ("from", "to"), strict=True):
            found.append(GoalValue("place", word, word, role, (start, end)))
    return found


def _is_name(word: str) -> bool:
    return word[0].isupper() and word.lower() not in _DATE_WORDS and word.lower() not in _SMALL


def _name_after(
    tokens: list[tuple[str, int, int]], start: int, *, allow_lower: bool, vocab: Collection[str]
) -> tuple[int, int] | None:
    if start >= len(tokens):
        return None
    word = tokens[start][0]
    if word[0].isdigit():
        return None
    if _is_name(word):
        end = start
        while end + 1 < len(tokens) and _is_name(tokens[end + 1][0]) and not _CODE.match(word):
            if _CODE.match(tokens[end + 1][0]):
                break
            end += 1
        return start, end
    low = word.lower()
    plain = allow_lower and word.isalpha() and len(low) > 1
    if plain and low not in _SMALL and low not in _DATE_WORDS and stem(low) not in vocab:
        return start, start
    return None


def _name_before(tokens: list[tuple[str, int, int]], end: int) -> tuple[int, int] | None:
    word = tokens[end][0]
    if not _is_name(word) or (end == 0 and not _CODE.match(word)):  # the first word is
        return None  # capitalised anyway: only a code counts there
    start = end
    while start - 1 > 0 and _is_name(tokens[start - 1][0]) and not _CODE.match(word):
        start -= 1
    return start, end


# --- matching params -------------------------------------------------------------------------
def _param_words(name: str, spec: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(the name's words, the description's words), stemmed."""
    own = {stem(w) for w in words(name)} | set(words(name))
    said = {stem(w) for w in words(str(spec.get("description") or ""))}
    return own, said


def _is_date_param(name: str, spec: Mapping[str, Any]) -> bool:
    if spec.get("format") == "date":
        return True
    if spec.get("format") or spec.get("type") not in (None, "string", "any"):  # date-time too
        return False
    own, _ = _param_words(name, spec)
    check_in_out = "check" in own and bool(own & {"in", "out"})
    return (bool(own & _DATE_NAMES) or check_in_out) and not own & {"id", "count", "num", "number"}


def _role(name: str, spec: Mapping[str, Any]) -> str:
    own, said = _param_words(name, spec)
    for words_ in (own, said):
        if words_ & _ORIGIN:
            return "from"
        if words_ & _DESTINATION:
            return "to"
        if words_ & _PLACE:
            return "in"
        if words_ & _PERSON:
            return "person"
    return ""


def _value_for(name: str, spec: Mapping[str, Any], values: list[GoalValue]) -> GoalValue | None:
    kind = spec.get("type")
    if kind in ("integer", "number"):
        own, said = _param_words(name, spec)
        return next(
            (v for v in values if v.kind == "number" and v.role in own | said),
            None,
        )
    if kind not in ("string", "any", None):
        return None
    role = _role(name, spec)
    places = [v for v in values if v.kind == "place"]
    if role == "from":
        return next((v for v in places if v.role == "from"), None)
    if role == "to":  # "a hotel in Barcelona" names the destination when no "to" does
        return next((v for v in places if v.role == "to"), None) or next(
            (v for v in places if v.role == "in"), None
        )
    if role == "in":
        return next((v for v in places if v.role == "in"), None) or next(
            (v for v in places if v.role == "to"), None
        )
    if role == "person":
        return next((v for v in values if v.kind == "person"), None)
    return None


def _enum_phrase(enum: list[Any], goal: str) -> Any:
    """The enum value written in the goal, the longest first (``premium economy``)."""
    low = " ".join(words(goal))
    for value in sorted(enum, key=lambda v: -len(words(str(v)))):
        phrase = " ".join(words(str(value)))
        if phrase and re.search(rf"\b{re.escape(phrase)}\b", low):
            return value
    return None
