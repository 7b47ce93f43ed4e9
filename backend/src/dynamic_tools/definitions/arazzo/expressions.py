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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.criteria import header_key

_SEGMENT = re.compile(r"^[A-Za-z0-9_]+$")
_NAME = r"[A-Za-z0-9_\-]+"
_EXPRESSION = re.compile(
    r"\$(?:statusCode|method|url"
    r"|(?:request|response)\.(?:header|query|path)\.[A-Za-z0-9_\-.]+"
    r"|(?:request|response)\.body(?:#(?:/[^\s{}'\"()\[\],]*)*)?(?:\.[A-Za-z0-9_\-]+|\[\d+\])*"
    rf"|inputs\.{_NAME}(?:#(?:/[^\s{{}}'\"()\[\],]*)*)?(?:\.[A-Za-z0-9_\-]+|\[\d+\])*"
    rf"|outputs\.{_NAME}(?:\.[A-Za-z0-9_\-]+|\[\d+\])*"
    rf"|steps\.{_NAME}(?:\.[A-Za-z0-9_\-]+|\[\d+\])*(?:#(?:/[^\s{{}}'\"()\[\],]*)*)?"
    rf"|workflows\.{_NAME}\.(?:outputs|inputs)\.{_NAME}(?:\.[A-Za-z0-9_\-]+|\[\d+\])*"
    rf"|components\.{_NAME}\.{_NAME})"
)
_BRACED = re.compile(r"\{(" + _EXPRESSION.pattern + r")\}")
_ANY_EMBEDDED = re.compile(_BRACED.pattern + r"|(?P<bare>" + _EXPRESSION.pattern + r")")


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
        if _EXPRESSION.fullmatch(text):
            return self.expression(text, answer)
        out: list[str] = []
        position = 0
        for match in (_ANY_EMBEDDED if self.lenient else _BRACED).finditer(text):
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
        for match in _EXPRESSION.finditer(text):
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
        parts = _dotted(head[1:])
        root = parts[0]
        tail = _pointer(pointer) if pointer else []
        if root == "inputs":
            name = self.names.params.get(parts[1])
            if name is None:
                raise ExpressionProblem(f"'{text}': the workflow has no input '{parts[1]}'")
            return _ref(name, [*parts[2:], *tail])
        if root == "steps":
            return self._step(text, parts, tail)
        if root == "workflows":
            node = self.names.workflow_outputs.get(parts[1])
            if node is None:
                raise ExpressionProblem(
                    f"'{text}': workflow '{parts[1]}' is not run before this one (dependsOn)"
                )
            if parts[2] != "outputs":
                raise ExpressionProblem(f"'{text}': only a workflow's outputs can be read")
            return _ref(node, parts[3:])
        if root == "outputs":
            if answer is None:
                raise ExpressionProblem(f"'{text}' is read only in a workflow step's outputs")
            return _ref(answer.body[1:], parts[1:])
        if answer is None:
            raise ExpressionProblem(f"'{text}' has no answer to read here")
        return self._answer(text, root, parts, tail, answer)

    def _step(self, text: str, parts: list[str], tail: list[str]) -> str:
        step = parts[1]
        output = self.names.step_outputs.get(step)
        if output is None:
            raise ExpressionProblem(f"'{text}': there is no step '{step}'")
        rest = parts[2:]
        if rest[:1] == ["outputs"]:
            rest = rest[1:]
        elif self.lenient and rest:
            self.shortcuts.append(f"'{text}' reads a step output without '.outputs'")
        else:
            raise ExpressionProblem(
                f"'{text}': a step is read by its outputs ($steps.id.outputs.x)"
            )
        if not rest:
            raise ExpressionProblem(f"'{text}' names no output")
        named = self.names.output_names.get(step, {})
        first = named.get(rest[0], rest[0])
        return _ref(output, [first, *rest[1:], *tail])

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


__all__ = ["Answer", "ExpressionProblem", "Names", "Translator"]
