"""Arazzo runtime expressions rewritten as the engine's references.

An Arazzo value is a runtime expression (``$steps.find.outputs.id``), a string with embedded
ones (``"Bearer {$steps.login.outputs.token}"``) or plain data. The engine reads the same
things by other names:

==============================================  ======================================
Arazzo                                          engine
==============================================  ======================================
``$inputs.x`` (``#/a/b`` after it)              ``$x`` (``.a.b``) — a workflow param
``$steps.s.outputs.o``                          ``$s.o`` — the step's named outputs
``$workflows.w.outputs.o``                      ``$<w's node>.o`` (a ``dependsOn`` workflow)
``$outputs.o`` (a workflow step's outputs)      ``$result.o`` — the sub-workflow's result
``$statusCode``                                 ``$status`` (``$error.status_code`` after a failure)
``$response.body#/a/0``                         ``$result.a.0`` (``$error.body.a.0``)
``$response.header.X-Rate-Limit``               ``$headers.x_rate_limit``
``$request.query.q`` (also path, header, body)  the value the step sends
``$method``, ``$url``                           the step's method, its URL template
==============================================  ======================================

Lenient mode also reads the shortcuts some runners accept: ``$steps.s.o`` (no ``outputs``),
dotted bodies (``$response.body.a.b``) and embedded expressions without braces; each use is
a warning. A pointer segment the engine cannot name (``#/redirect-url``) is a problem with
its place, never a silent change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from dynamic_tools.engine.criteria import header_key

_SEGMENT = re.compile(r"^[A-Za-z0-9_]+$")
_PLAIN_NAME = r"[A-Za-z0-9_\-]+"
"""A name as Arazzo recommends them (ids SHOULD match it; outputs and components MUST)."""


@lru_cache(maxsize=256)
def expression_patterns(known: frozenset[str] = frozenset()) -> tuple[re.Pattern[str], ...]:
    """The expression, braced and embedded patterns, reading the ``known`` names whole.

    Arazzo's expression grammar puts no bound on a name (``$steps.find pets.outputs.body``):
    the names a document declares are tried first, longest first, then a plain name.
    """
    name = "(?:" + name_alternation(known, _PLAIN_NAME) + ")"
    segments = rf"(?:\.{name}|\[\d+\])*"
    pointer = r"(?:#(?:/[^\s{}'\"()\[\],]*)*)?"
    expression = re.compile(
        r"\$(?:statusCode|method|url"
        r"|(?:request|response)\.(?:header|query|path)\.[A-Za-z0-9_\-.]+"
        rf"|(?:request|response)\.body{pointer}(?:\.[A-Za-z0-9_\-]+|\[\d+\])*"
        rf"|inputs\.{name}{pointer}{segments}"
        rf"|outputs\.{name}{segments}"
        rf"|steps\.{name}{segments}{pointer}"
        rf"|workflows\.{name}\.(?:outputs|inputs)\.{name}{segments}"
        rf"|components\.{name}\.{name})"
    )
    braced = re.compile(r"\{(" + expression.pattern + r")\}")
    embedded = re.compile(braced.pattern + r"|(?P<bare>" + expression.pattern + r")")
    return expression, braced, embedded


def name_alternation(known: Iterable[str], plain: str) -> str:
    """A regex alternation: the known names ``plain`` does not match, longest first, then it."""
    unusual = sorted((n for n in known if n and not re.fullmatch(plain, n)), key=len, reverse=True)
    return "|".join([*(re.escape(n) for n in unusual), plain])


def split_name(text: str, known: Iterable[str]) -> tuple[str, str]:
    """``text`` (after ``$steps.``, say) as the name it starts with and what follows it.

    A known name is taken whole, the longest first (names may hold spaces and dots); else
    the text up to the first ``.``, ``[`` or ``#``.
    """
    plain = re.match(_PLAIN_NAME, text)
    rest = text[plain.end() : plain.end() + 1] if plain else None
    if plain and rest in ("", ".", "[", "#") and plain.group(0) in known:
        longer = [n for n in known if len(n) > plain.end() and text.startswith(n)]
        if not longer:  # the usual case: a plain name, found at once
            return plain.group(0), text[plain.end() :].removeprefix(".")
    for name in sorted(known, key=len, reverse=True):
        if text.startswith(name) and text[len(name) : len(name) + 1] in ("", ".", "[", "#"):
            return name, text[len(name) :].removeprefix(".")
    found = re.match(r"[^.\[#]*", text)
    name = found.group(0) if found else ""
    return name, text[len(name) :].removeprefix(".")


def listing(what: str, names: Iterable[str]) -> str:
    """`` (steps: 'a', 'b')``: what a document has, for a message about a name it lacks."""
    shown = sorted(names)
    if not shown:
        return f" (it has no {what})"
    more = f" and {len(shown) - 20} more" if len(shown) > 20 else ""
    return f" ({what}: " + ", ".join(f"'{n}'" for n in shown[:20]) + more + ")"


class ExpressionProblem(ValueError):
    """An expression that cannot be carried over (the message says why)."""


@dataclass
class Names:
    """How the names of one workflow are written in the engine, and where a step is read."""

    params: Mapping[str, str]
    step_outputs: Mapping[str, str]
    """Arazzo step id → the engine name of its output."""
    workflow_outputs: Mapping[str, str] = field(default_factory=dict)
    """A ``dependsOn`` workflow id → the engine name of its node's output."""
    output_names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Arazzo step id → its outputs' Arazzo names → engine names."""
    others: frozenset[str] = frozenset()
    """Other names the document declares (workflows, components, sources)."""

    def known(self) -> frozenset[str]:
        """Every name an expression of this workflow may hold."""
        outputs = {n for named in self.output_names.values() for n in named}
        return frozenset(
            {*self.params, *self.step_outputs, *self.workflow_outputs, *outputs, *self.others}
        )


@dataclass
class Answer:
    """How the answer of the step being translated is read (after it succeeded or failed)."""

    status: str = "$status"
    body: str = "$result"
    headers: str | None = "$headers"
    request: Callable[[str, str], str] | None = None
    """(where, name) → the engine text of the value the step sends (query/path/header/body)."""
    method: str | None = None
    url: str | None = None


@dataclass
class Translator:
    """Rewrites the expressions of one workflow; collects the lenient shortcuts it met."""

    names: Names
    lenient: bool = False
    shortcuts: list[str] = field(default_factory=list)

    @cached_property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        """The expression, braced and embedded patterns that read this workflow's names."""
        return expression_patterns(self.names.known())

    def is_expression(self, text: str) -> bool:
        """Whether ``text`` is one runtime expression (braced or not)."""
        whole, braced_only, _ = self.patterns
        return bool(whole.fullmatch(text) or braced_only.fullmatch(text))

    def value(self, value: Any, answer: Answer | None = None) -> Any:
        """A parameter value, payload, output or workflow output, rewritten (data walked)."""
        if isinstance(value, str):
            return self.text(value, answer)
        if isinstance(value, dict):
            return {k: self.value(v, answer) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, answer) for v in value]
        return value

    def text(self, text: str, answer: Answer | None = None) -> str:
        """A string: one expression, or text with ``{$...}`` (lenient: bare ``$...``) inside."""
        whole, braced_only, embedded = self.patterns
        if whole.fullmatch(text):
            return self.expression(text, answer)
        out: list[str] = []
        position = 0
        for match in (embedded if self.lenient else braced_only).finditer(text):
            braced, bare = match.group(1), match.groupdict().get("bare")
            out.append(_literal(text[position : match.start()]))
            if bare is not None:
                self.shortcuts.append(f"'{bare}' is embedded without braces")
            out.append(self.expression(braced or bare or "", answer))
            position = match.end()
        out.append(_literal(text[position:]))
        return "".join(out)

    def condition(self, text: str, answer: Answer) -> str:
        """A ``simple`` criterion's condition: its expressions rewritten, the rest kept."""
        out: list[str] = []
        position = 0
        for match in self.patterns[0].finditer(text):
            out.append(text[position : match.start()])
            if match.group(0) == "$url":
                raise ExpressionProblem("'$url' cannot be compared in a condition here")
            value = self.expression(match.group(0), answer)
            out.append(repr(value) if match.group(0) == "$method" else value)
            position = match.end()
        out.append(text[position:])
        return "".join(out)

    def expression(self, text: str, answer: Answer | None) -> str:
        """One runtime expression as an engine reference."""
        head, _, pointer = text.partition("#")
        root, _, rest = head[1:].partition(".")
        tail = _pointer(pointer) if pointer else []
        if root == "inputs":
            name, after = split_name(rest, self.names.params)
            engine = self.names.params.get(name)
            if engine is None:
                raise ExpressionProblem(
                    f"'{text}': the workflow has no input '{name}'"
                    + listing("inputs", self.names.params)
                )
            return _ref(engine, [*_dotted(after), *tail])
        if root == "steps":
            return self._step(text, rest, tail)
        if root == "workflows":
            name, after = split_name(rest, self.names.workflow_outputs)
            node = self.names.workflow_outputs.get(name)
            if node is None:
                raise ExpressionProblem(
                    f"'{text}': workflow '{name}' is not run before this one (dependsOn)"
                    + listing("workflows run before it", self.names.workflow_outputs)
                )
            parts = _dotted(after)
            if parts[:1] != ["outputs"]:
                raise ExpressionProblem(f"'{text}': only a workflow's outputs can be read")
            return _ref(node, parts[1:])
        if root == "outputs":
            if answer is None:
                raise ExpressionProblem(f"'{text}' is read only in a workflow step's outputs")
            return _ref(answer.body[1:], _dotted(rest))
        if answer is None:
            raise ExpressionProblem(f"'{text}' has no answer to read here")
        return self._answer(text, root, [root, *_dotted(rest)], tail, answer)

    def _step(self, text: str, rest: str, tail: list[str]) -> str:
        step, after = split_name(rest, self.names.step_outputs)
        output = self.names.step_outputs.get(step)
        if output is None:
            raise ExpressionProblem(
                f"'{text}': there is no step '{step}'" + listing("steps", self.names.step_outputs)
            )
        if after == "outputs" or after.startswith(("outputs.", "outputs[")):
            after = after.removeprefix("outputs").removeprefix(".")
        elif self.lenient and after:
            self.shortcuts.append(f"'{text}' reads a step output without '.outputs'")
        else:
            raise ExpressionProblem(
                f"'{text}': a step is read by its outputs ($steps.id.outputs.x)"
            )
        if not after:
            raise ExpressionProblem(f"'{text}' names no output")
        named = self.names.output_names.get(step, {})
        first, more = split_name(after, named)
        return _ref(output, [named.get(first, first), *_dotted(more), *tail])

    def _answer(
        self, text: str, root: str, parts: list[str], tail: list[str], answer: Answer
    ) -> str:
        if root == "statusCode":
            return answer.status
        if root == "method":
            if answer.method is None:
                raise ExpressionProblem(f"'{text}' has no request here")
            return answer.method
        if root == "url":
            if answer.url is None:
                raise ExpressionProblem(f"'{text}' has no request here")
            return answer.url
        where = parts[1] if len(parts) > 1 else ""
        if root == "response" and where == "body":
            if len(parts) > 2 and not tail:
                if not self.lenient:
                    raise ExpressionProblem(
                        f"'{text}': read a body with a JSON pointer ($response.body#/a/b)"
                    )
                self.shortcuts.append(f"'{text}' reads the body by dots, not a JSON pointer")
            return _ref(answer.body[1:], [*parts[2:], *tail])
        if root == "response" and where == "header":
            if answer.headers is None:
                raise ExpressionProblem(f"'{text}': the headers of a failed answer are not kept")
            return _ref(answer.headers[1:], [header_key(".".join(parts[2:]))])
        if root == "request" and answer.request is not None:
            if where == "body":
                return answer.request("body", "/".join([*parts[2:], *tail]))
            return answer.request(where, ".".join(parts[2:]))
        raise ExpressionProblem(f"'{text}' cannot be read here")


def _dotted(text: str) -> list[str]:
    """``a.b[0].c`` → ``[a, b, 0, c]``."""
    parts: list[str] = []
    for piece in text.split("."):
        name, *indexes = re.split(r"\[(\d+)\]", piece)
        if name:
            parts.append(name)
        parts.extend(i for i in indexes if i)
    return parts


def _pointer(pointer: str) -> list[str]:
    if pointer in ("", "/"):
        return []
    if not pointer.startswith("/"):
        raise ExpressionProblem(f"'#{pointer}' is not a JSON pointer")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def _ref(name: str, path: list[str]) -> str:
    for segment in path:
        if not _SEGMENT.match(segment):
            raise ExpressionProblem(
                f"'{segment}' cannot be read by a reference (letters, digits and _ only)"
            )
    return "$" + ".".join([name, *path])


def _literal(text: str) -> str:
    """Plain text, its ``$`` kept literal for the engine (``$$``)."""
    return text.replace("$", "$$")


__all__ = [
    "Answer",
    "ExpressionProblem",
    "Names",
    "Translator",
    "expression_patterns",
    "listing",
    "name_alternation",
    "split_name",
]
