"""Nesting limits for untrusted JSON and YAML, checked before anything recursive walks the data.

Python's parsers and the code that walks their output recurse once per level: a document
nested 10,000 deep makes ``json.loads`` raise :class:`RecursionError`, PyYAML's pure-Python
composer do the same, and libyaml's C composer overflow the C stack (a segmentation fault that
kills the process). So every document is measured first, without recursion:

- :func:`loads_json` parses JSON and turns the parser's own recursion failure into
  :class:`TooDeep` (CPython's decoder checks its depth and fails cleanly, long before the C
  stack is at risk), then measures the result with :func:`find_too_deep`.
- :func:`yaml_too_deep` reads a YAML text as a stream of events (libyaml's event parser keeps
  its own stack, it does not recurse) and stops at the first level past the limit, so even a
  nesting bomb costs only ``limit`` levels of work; :func:`loads_yaml` parses a YAML text
  (safe loader, C when available) once it passed that check.
- :func:`find_too_deep` walks parsed data without recursion: level by level, then (only when
  it is too deep) with an explicit stack for the path.

Depth counts containers: ``{"a": [1]}`` is 2 deep, a scalar is 0.
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from dynamic_tools.violations import syntax_position

MAX_VALUE_DEPTH = 100
"""How deep a value a run handles may nest: run params, yield answers, what criteria, named
outputs and references read from an API's answer (the HTTP sender keeps a JSON answer nested
deeper as text). Past it a run fails "too deep" instead of recursing."""

_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPENERS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSERS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class TooDeep(Exception):
    """Data nests deeper than ``limit``: at ``path`` (keys and indexes) or at source ``line``."""

    def __init__(
        self, limit: int, path: tuple[str | int, ...] = (), line: int | None = None
    ) -> None:
        super().__init__(limit, path, line)  # the arguments, so the error pickles
        self.limit = limit
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = f" at line {self.line}" if self.line else ""
        if self.path:
            where += " at " + shorten(".".join(str(p) for p in self.path))
        return f"nested deeper than {self.limit} levels{where}"


_pause_lock = threading.Lock()
_pauses = 0
_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs (blocks may nest and overlap).

    For building or reading large acyclic data (a parsed document, its tools, a worker's
    answer): every allocation counts towards a collection, and each full collection walks all
    the data built so far, which cannot be garbage yet (reference counting frees everything
    else as usual). The collector is turned back on when the last block ends, if it was on.
    """
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


def shorten(text: str, width: int = 120) -> str:
    """``text`` cut in the middle to about ``width`` characters (for messages)."""
    if len(text) <= width:
        return text
    keep = (width - 1) // 2
    return f"{text[:keep]}…{text[-keep:]}"


def find_too_deep(data: Any, limit: int) -> tuple[str | int, ...] | None:
    """The path of the first container nested deeper than ``limit`` in ``data``, else None.

    Measured level by level first (:func:`deeper_than`, no path kept): a document within the
    limit, the usual case, costs one ``isinstance`` per value; the path is looked for only
    when it is too deep.
    """
    if not deeper_than(data, limit):
        return None
    return _path_too_deep(data, limit)


def deeper_than(data: Any, limit: int) -> bool:
    """True when ``data`` holds a container nested deeper than ``limit`` (without recursion)."""
    level = [data]
    depth = 0
    while level:
        below: list[Any] = []
        containers = False
        for node in level:
            if isinstance(node, dict):
                children: Any = node.values()
            elif isinstance(node, list):
                children = node
            else:
                continue
            containers = True
            for child in children:
                if isinstance(child, dict | list):
                    below.append(child)
        if not containers:
            return False
        depth += 1
        if depth > limit:
            return True
        level = below
    return False


def _path_too_deep(data: Any, limit: int) -> tuple[str | int, ...] | None:
    """The path of the first container nested deeper than ``limit``, walked with its path."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(data, (), 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict):
            items: Any = ((str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth + 1 > limit:
            return path
        stack.extend((value, (*path, key), depth + 1) for key, value in items)
    return None


def check_depth(data: Any, limit: int) -> None:
    """Raise :class:`TooDeep` (with the path) when ``data`` nests deeper than ``limit``."""
    path = find_too_deep(data, limit)
    if path is not None:
        raise TooDeep(limit, path)


def loads_json(text: str | bytes, limit: int) -> Any:
    """``json.loads`` that raises :class:`TooDeep` instead of recursing past ``limit``.

    Raises :class:`json.JSONDecodeError` for text that is not JSON, as ``json.loads`` does.
    """
    try:
        data = json.loads(text)
    except RecursionError:
        raise TooDeep(limit) from None
    check_depth(data, limit)
    return data


def loads_yaml(text: str, limit: int) -> Any:
    """Parse YAML ``text`` with a safe loader (C when available).

    Nesting deeper than ``limit`` is refused first (:class:`TooDeep` with its line); syntax
    errors raise ``yaml.YAMLError``.
    """
    line = yaml_too_deep(text, limit)
    if line is not None:
        raise TooDeep(limit, line=line)
    return yaml.load(text, Loader=_YamlLoader)


def yaml_too_deep(text: str, limit: int) -> int | None:
    """The 1-based line where YAML ``text`` first nests deeper than ``limit``, else None.

    Syntax errors are left for the loader to report (this returns None on them).
    """
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_YamlLoader):
            if isinstance(event, _OPENERS):
                depth += 1
                if depth > limit:
                    mark = event.start_mark
                    return mark.line + 1 if mark is not None else None
            elif isinstance(event, _CLOSERS):
                depth -= 1
    except yaml.YAMLError as exc:
        # PyYAML >= 6.0.4 refuses flow nesting past its own ceiling (far above any limit used
        # here) while scanning ahead: that is too deep as well.
        line, _, problem = syntax_position(exc)
        if "nesting depth" in problem:
            return line or 1
        return None
    return None
