"""Success criteria of a call, and what a call's answer offers them: status, headers, body.

A call node's ``criteria`` decide whether an answer is a success — when a node has them, they
alone decide, so ``$status == 404`` can make "not found" the expected answer. All must hold.
Each criterion has a ``type``:

- ``simple``: ``condition`` is an expression (``$status == 200 && $result.ok``);
- ``regex``: ``condition`` is a regular expression searched in the text of ``context``;
- ``jsonpath``: ``condition`` is an RFC 9535 JSONPath query over ``context`` (a JSON value),
  true when it selects something (``$[?count(@.pets) > 0]``);
- ``xpath``: ``condition`` is an XPath query over ``context`` (XML text, parsed safely), true
  when it selects something or yields true.

``context`` is a value template (``$result``, ``$headers.content_type``); the default is the
body. In criteria, in a call's ``outputs`` and in ``on_error.retry_if`` the answer is read as
``$result`` (the body), ``$status`` (the status code) and ``$headers`` (the response headers the
node names, lower case, ``-`` written ``_``: ``$headers.x_rate_limit``). Only the headers a
node names are recorded with its step.

A hostile pattern costs little: a regex search stops after :data:`REGEX_TIMEOUT_S` and counts
as not met; XML is parsed with defusedxml (no entities, no external references). A context
nested deeper than :data:`~dynamic_tools.safe_parsing.MAX_VALUE_DEPTH` levels (JSON containers, XML
elements) raises :class:`~dynamic_tools.safe_parsing.TooDeep` before any library walks it: the
JSONPath, XPath and JSON libraries recurse once per level.

The pattern libraries (``regex``, ``python-jsonpath``, ``elementpath``, defusedxml) are imported
on the first criterion of their type, not with this module: a server whose workflows have no
such criterion never loads them (docs/performance.md, "Memory: idle and at 1,000 tools").
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from dynamic_tools.engine.node_parts import FrozenModel
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, TooDeep, check_depth, loads_json

CriterionType = Literal["simple", "regex", "jsonpath", "xpath"]
ANSWER_LOCALS = frozenset({"result", "status", "headers"})
"""The names a criterion, a call's ``outputs`` and ``retry_if`` read the answer by."""

REGEX_TIMEOUT_S = 0.25
MAX_NESTING = 50
"""How deep a regex, JSONPath or XPath condition may nest brackets."""
MAX_XML_CHARS = 1_000_000
_HEADER_REF = re.compile(r"\$headers\.([A-Za-z0-9_]+)")


@functools.cache
def _jsonpath_environment() -> Any:
    """The JSONPath environment, built (and the library imported) on first use."""
    import jsonpath

    class _JsonPathEnvironment(jsonpath.JSONPathEnvironment):
        # One level more than a context may nest: the root filter also tests ``[context]``.
        max_recursion_depth = MAX_VALUE_DEPTH + 1

    return _JsonPathEnvironment()


class Criterion(FrozenModel):
    """One success criterion: a condition of a type, tested on a context (default: the body)."""

    condition: str = Field(min_length=1, max_length=2_000)
    type: CriterionType = "simple"
    context: str | None = Field(
        default=None, description="A value template, e.g. $result or $headers.content_type."
    )

    @field_validator("type", mode="before")
    @classmethod
    def _type_object(cls, value: Any) -> Any:
        # Arazzo also writes the type as {type: jsonpath, version: ...}.
        return value.get("type") if isinstance(value, dict) else value


class CriterionError(ValueError):
    """A criterion that cannot be compiled (a bad pattern or query)."""


def header_key(name: str) -> str:
    """How a response header is named in ``$headers``: lower case, ``-`` as ``_``."""
    return name.lower().replace("-", "_")


def headers_named(texts: Iterable[Any]) -> frozenset[str]:
    """The ``$headers.<name>`` keys the given texts read (nested values walked)."""
    found: set[str] = set()
    stack = list(texts)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.update(match.group(1).lower() for match in _HEADER_REF.finditer(value))
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return frozenset(found)


def kept_headers(headers: Mapping[str, str], wanted: Collection[str]) -> dict[str, str]:
    """The response headers a node names, keyed as ``$headers`` reads them."""
    if not wanted:
        return {}
    return {header_key(k): v for k, v in headers.items() if header_key(k) in wanted}


def compile_criterion(criterion: Criterion) -> None:
    """Raise :class:`CriterionError` when a non-simple criterion's condition does not compile.

    A pattern nesting brackets more than :data:`MAX_NESTING` deep is refused before it is
    compiled (the libraries' parsers recurse on nesting).
    """
    depth = deepest = 0
    for char in criterion.condition:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        raise CriterionError(
            f"the {criterion.type} condition nests brackets {deepest} deep (at most {MAX_NESTING})"
        )
    if criterion.type == "regex":
        _regex(criterion.condition)
    elif criterion.type == "jsonpath":
        _jsonpath(criterion.condition)
    elif criterion.type == "xpath":
        _xpath(criterion.condition)


def pattern_holds(criterion: Criterion, context: Any) -> bool:
    """Whether a ``regex``, ``jsonpath`` or ``xpath`` criterion holds for ``context``.

    A JSONPath filter at the root of an object also tests the object itself
    (``$[?count(@.products) > 0]`` over ``{"products": [...]}``), as the Goessner-style
    implementations Arazzo documents are written for do; RFC 9535 alone selects only children.
    A JSONPath over text parses it as JSON first (text that is not JSON is a plain string).

    Raises :class:`~dynamic_tools.safe_parsing.TooDeep` when ``context`` (or the JSON or XML text
    it holds) nests deeper than :data:`~dynamic_tools.safe_parsing.MAX_VALUE_DEPTH` levels.
    """
    try:
        compile_criterion(criterion)
    except CriterionError:
        return False
    if criterion.type == "regex":
        if not isinstance(context, str):
            check_depth(context, MAX_VALUE_DEPTH)
        text = context if isinstance(context, str) else _text(context)
        try:
            return _regex(criterion.condition).search(text, timeout=REGEX_TIMEOUT_S) is not None
        except TimeoutError:
            return False
    if criterion.type == "jsonpath":
        return _jsonpath_holds(criterion.condition, _json_value(context))
    if criterion.type == "xpath":
        if not isinstance(context, str) or len(context) > MAX_XML_CHARS:
            return False
        import elementpath
        from defusedxml import ElementTree as SafeXml

        try:
            root = SafeXml.fromstring(context)
        except Exception:  # not XML, or refused by defusedxml: the criterion is not met
            return False
        _check_xml_depth(root)
        try:
            found = elementpath.select(root, criterion.condition)
        except (elementpath.ElementPathError, RecursionError):
            return False
        return bool(found)
    raise CriterionError(f"'{criterion.type}' criteria are evaluated as expressions")


def _json_value(context: Any) -> Any:
    """What a JSONPath reads: the context, or the JSON its text holds; depth checked."""
    if not isinstance(context, str):
        check_depth(context, MAX_VALUE_DEPTH)
        return context
    try:
        return loads_json(context, MAX_VALUE_DEPTH)
    except json.JSONDecodeError:
        return context  # text that is not JSON: a plain string


def _jsonpath_holds(condition: str, value: Any) -> bool:
    if isinstance(value, str):  # the library would parse a string again: only $ selects it
        return condition.strip() == "$"
    from jsonpath.exceptions import JSONPathRecursionError

    query = _jsonpath(condition)
    try:
        if query.findall(value):
            return True
        return isinstance(value, dict) and bool(query.findall([value]))
    except JSONPathRecursionError:  # depth was checked: the library's own bound
        raise TooDeep(MAX_VALUE_DEPTH) from None


def _check_xml_depth(root: Any) -> None:
    """Raise :class:`TooDeep` when XML elements nest past the limit (a stack, no recursion)."""
    stack = [(root, 1)]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_VALUE_DEPTH:
            raise TooDeep(MAX_VALUE_DEPTH)
        stack.extend((child, depth + 1) for child in element)


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    import regex

    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise CriterionError(f"'{pattern}' is not a regular expression ({exc})") from None
    except RecursionError:
        raise CriterionError("the regular expression nests too deeply") from None


@functools.lru_cache(maxsize=256)
def _jsonpath(query: str) -> Any:
    import jsonpath

    try:
        return _jsonpath_environment().compile(query)
    except jsonpath.JSONPathError as exc:
        raise CriterionError(f"'{query}' is not a JSONPath query ({exc})") from None
    except RecursionError:
        raise CriterionError("the JSONPath query nests too deeply") from None


@functools.lru_cache(maxsize=256)
def _xpath(query: str) -> str:
    import elementpath

    try:
        elementpath.XPath2Parser().parse(query)
    except elementpath.ElementPathError as exc:
        raise CriterionError(f"'{query}' is not an XPath query ({exc})") from None
    except RecursionError:
        raise CriterionError("the XPath query nests too deeply") from None
    return query


def holds(kind: CriterionType, condition: str, context: Any) -> bool:
    """Whether pattern ``condition`` of ``kind`` holds for ``context`` (expression functions).

    Raises :class:`CriterionError` when the pattern does not compile, and
    :class:`~dynamic_tools.safe_parsing.TooDeep` when ``context`` nests past the limit.
    """
    criterion = Criterion(condition=condition, type=kind)
    compile_criterion(criterion)
    return pattern_holds(criterion, context)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True)


__all__ = [
    "ANSWER_LOCALS",
    "MAX_NESTING",
    "REGEX_TIMEOUT_S",
    "Criterion",
    "CriterionError",
    "CriterionType",
    "compile_criterion",
    "header_key",
    "headers_named",
    "holds",
    "kept_headers",
    "pattern_holds",
]
