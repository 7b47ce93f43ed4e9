"""``$name.path`` references: finding them in text, resolving them, rendering documents.

A reference is ``$`` followed by a name (``[A-Za-z_][A-Za-z0-9_]*``) and any number of
``.segment`` parts (``[A-Za-z0-9_]+``). A segment made of digits indexes a list; ``length``
gives the length of a list, a string, or an object that has no ``length`` key of its own. A
``.`` that is not followed by a segment character ends the reference, so in
``"Found $options.length flights."`` the reference is ``$options.length``. ``$$`` is a literal
``$``, and a ``$`` not followed by a name is kept as written (``"costs $5"``).

``render`` walks an ``args`` document: a string that is exactly one reference becomes the
referenced value with its JSON type; a string with references elsewhere is interpolated. Every
failure raises ``UnresolvedReferenceError`` naming the reference, the segment and the node;
nothing unresolvable becomes a silent ``None``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, TooDeep, check_depth

REFERENCE_PATTERN = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_]+)*)")
"""``$name`` plus ``.segment`` parts; group 1 is the name, group 2 the dotted path."""

LENGTH = "length"
_PREVIEW = 40
_MAX_KEYS_SHOWN = 8


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``$name.path`` occurrence.

    Attributes:
        name: The leading name (a param, a named output, a ``foreach`` variable, a yield node).
        path: The segments after the name; all-digit segments are ints (list indexes).
        text: The reference exactly as written, ``$`` included.
        start: The offset of the ``$`` in the source string.
        end: The offset just past the reference in the source string.
    """

    name: str
    path: tuple[str | int, ...]
    text: str
    start: int
    end: int


def reference_from_match(match: re.Match[str], offset: int = 0) -> Reference:
    """A ``Reference`` from a ``REFERENCE_PATTERN`` match, its offsets shifted by ``offset``."""
    dotted = match.group(2)
    path = tuple(_segment(part) for part in dotted[1:].split(".")) if dotted else ()
    return Reference(
        name=match.group(1),
        path=path,
        text=match.group(0),
        start=match.start() + offset,
        end=match.end() + offset,
    )


def parse_reference(text: str) -> Reference:
    """Parse a string that must be exactly one reference, e.g. ``$flight_results.0.id``.

    Raises:
        ExpressionError: The string is not one reference; ``position`` is the first bad char.
    """
    match = REFERENCE_PATTERN.match(text)
    if match is None:
        if text.startswith("$"):
            detail = "a reference is '$' followed by a name"
            raise ExpressionError(detail, expression=text, position=1)
        raise ExpressionError("a reference must start with '$'", expression=text, position=0)
    if match.end() != len(text):
        bad = text[match.end()]
        detail = f"unexpected {bad!r} after the reference"
        raise ExpressionError(detail, expression=text, position=match.end())
    return reference_from_match(match)


def find_references(text: str) -> list[Reference]:
    """Every reference in ``text``, in order, with offsets into ``text`` (``$$`` is skipped)."""
    return [piece for piece in _scan(text) if isinstance(piece, Reference)]


def resolve_path(value: Any, ref: Reference, *, node_id: str | None = None) -> Any:
    """Follow ``ref.path`` into ``value`` (the value ``ref.name`` names).

    Raises:
        UnresolvedReferenceError: A segment does not fit what is there, e.g. ``index 3 out of
            range for a list of 2`` or ``no key 'seats' in an object with keys ...``.
    """
    current = value
    for segment in ref.path:
        current = _step(current, segment, ref, node_id)
    return current


def resolve_reference(
    ref: Reference, lookup: Callable[[str], Any], *, node_id: str | None = None
) -> Any:
    """Look ``ref.name`` up with ``lookup`` and follow the path.

    ``lookup`` raises ``KeyError`` for an unknown name (or ``UnresolvedReferenceError``
    itself). Bind ``lookup`` and ``node_id`` with ``functools.partial`` to get the
    ``resolve`` callable the expression evaluator takes.

    Raises:
        UnresolvedReferenceError: The name is unknown or the path does not fit.
    """
    try:
        value = lookup(ref.name)
    except KeyError:
        raise UnresolvedReferenceError(
            f"no parameter, output, loop variable or yield named {ref.name!r}",
            reference=ref.text,
            node_id=node_id,
        ) from None
    except UnresolvedReferenceError as error:
        raise error.with_node(node_id) from error.__cause__
    return resolve_path(value, ref, node_id=node_id)


def render(value: Any, lookup: Callable[[str], Any], *, node_id: str | None) -> Any:
    """``value`` with every reference in its strings resolved (dicts and lists are walked).

    A string that is exactly one reference becomes the referenced value, keeping its JSON
    type (int, list, object, null ...). A string with references among other text is
    interpolated: strings as they are, ``null``/``true``/``false`` for None and booleans,
    objects and lists as compact JSON. ``$$`` becomes ``$``. Dict keys are not rendered.

    Raises:
        UnresolvedReferenceError: A reference names nothing or its path does not fit; the
            error names the reference and ``node_id``.
    """
    if isinstance(value, str):
        return _render_text(value, lookup, node_id)
    if isinstance(value, dict):
        return {key: render(item, lookup, node_id=node_id) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, lookup, node_id=node_id) for item in value]
    return value


def to_text(value: Any) -> str:
    """``value`` as it appears inside an interpolated string (and from ``str()``).

    Raises :class:`~dynamic_tools.safe_parsing.TooDeep` for an object or list nested deeper than
    :data:`~dynamic_tools.safe_parsing.MAX_VALUE_DEPTH` levels (the JSON encoder recurses).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list | tuple):
        check_depth(value, MAX_VALUE_DEPTH)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return str(value)


def type_name(value: Any) -> str:
    """The JSON-flavoured name of ``value``'s type, for messages (``number``, ``object`` ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, timedelta):
        return "duration"
    return type(value).__name__


def describe(value: Any) -> str:
    """A short description of ``value`` for messages, e.g. ``a list of 2``."""
    kind = type_name(value)
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        if not value:
            return "an empty object"
        keys = [repr(str(key)) for key in list(value)[:_MAX_KEYS_SHOWN]]
        more = ", ..." if len(value) > _MAX_KEYS_SHOWN else ""
        return f"an object with keys {', '.join(keys)}{more}"
    shown = repr(value) if isinstance(value, str) else to_text(value)
    if len(shown) > _PREVIEW:
        shown = shown[: _PREVIEW - 3] + "..."
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{article} {kind} ({shown})"


def _segment(part: str) -> str | int:
    # "0" and "12" index lists; "007" stays a key so it can still name an object's field.
    if part.isdigit() and (part == "0" or not part.startswith("0")):
        return int(part)
    return part


def _step(current: Any, segment: str | int, ref: Reference, node_id: str | None) -> Any:
    def fail(detail: str) -> UnresolvedReferenceError:
        return UnresolvedReferenceError(
            detail, reference=ref.text, node_id=node_id, segment=segment
        )

    if isinstance(current, dict):
        key = str(segment)
        if key in current:
            return current[key]
        if segment == LENGTH:
            return len(current)
        raise fail(f"no key {key!r} in {describe(current)}")
    if isinstance(current, list | tuple):
        if isinstance(segment, int):
            if segment < len(current):
                return current[segment]
            raise fail(f"index {segment} out of range for {describe(current)}")
        if segment == LENGTH:
            return len(current)
        raise fail(f"{segment!r} used on {describe(current)}; use an index or .length")
    if isinstance(current, str) and segment == LENGTH:
        return len(current)
    raise fail(f"{segment!r} used on {describe(current)}")


def _scan(text: str) -> Iterator[str | Reference]:
    """``text`` as literal pieces (``$$`` already unescaped) and references, in order."""
    literal: list[str] = []
    position = 0
    while True:
        dollar = text.find("$", position)
        if dollar < 0:
            literal.append(text[position:])
            break
        literal.append(text[position:dollar])
        if text.startswith("$$", dollar):
            literal.append("$")
            position = dollar + 2
            continue
        match = REFERENCE_PATTERN.match(text, dollar)
        if match is None:
            literal.append("$")
            position = dollar + 1
            continue
        if any(literal):
            yield "".join(literal)
        literal = []
        yield reference_from_match(match)
        position = match.end()
    if any(literal):
        yield "".join(literal)


def _render_text(text: str, lookup: Callable[[str], Any], node_id: str | None) -> Any:
    if "$" not in text:
        return text
    pieces = list(_scan(text))
    if len(pieces) == 1 and isinstance(pieces[0], Reference) and pieces[0].end == len(text):
        return resolve_reference(pieces[0], lookup, node_id=node_id)
    parts: list[str] = []
    for piece in pieces:
        if isinstance(piece, Reference):
            value = resolve_reference(piece, lookup, node_id=node_id)
            try:
                parts.append(to_text(value))
            except TooDeep as exc:
                raise UnresolvedReferenceError(
                    f"too deep: its value is nested past {exc.limit} levels",
                    reference=piece.text,
                    node_id=node_id,
                ) from None
        else:
            parts.append(piece)
    return "".join(parts)


__all__ = [
    "LENGTH",
    "REFERENCE_PATTERN",
    "Reference",
    "describe",
    "find_references",
    "parse_reference",
    "reference_from_match",
    "render",
    "resolve_path",
    "resolve_reference",
    "to_text",
    "type_name",
]
