"""Loading workflow documents from YAML, JSON or XML into one model.

- YAML: a safe loader with YAML 1.2 booleans (only ``true``/``false``; the designs' ``on:`` key
  must stay the string "on"), size and depth limits, aliases counted so an alias bomb is
  refused, and the line of every mapping key kept so violations can point at lines.
- JSON: the standard parser with the same size and depth limits.
- XML: the designs' BPMN-inspired format read with defusedxml (entities, DTDs and external
  references refused), converted to the same mapping the YAML form gives.

Every failure is a :class:`WorkflowInvalidError` listing violations with path, line and message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.nodes import KIND_NAMES
from dynamic_tools.engine.xml_format import xml_to_mapping
from dynamic_tools.errors import WorkflowInvalidError
from dynamic_tools.safe_parsing import TooDeep, loads_json, shorten
from dynamic_tools.violations import syntax_position

DocumentFormat = Literal["yaml", "json", "xml"]
MAX_DOCUMENT_BYTES = 1_000_000
MAX_DEPTH = 64
MAX_NODES = 200_000


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader whose booleans are only true/false (YAML 1.2), so ``on``/``yes`` stay text.

    Its composer stops at ``MAX_DEPTH`` levels: PyYAML composes recursively, so a deeper
    document would otherwise end in a :class:`RecursionError`.
    """

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """Compose one node, refusing to go past ``MAX_DEPTH`` levels."""
        if self._depth >= MAX_DEPTH and self.check_event(
            yaml.MappingStartEvent, yaml.SequenceStartEvent
        ):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise _too_deep(None, mark.line + 1 if mark is not None else None)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_Yaml12Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.copy().items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


@dataclass
class LoadedDocument:
    """A parsed, model-checked document and where its keys are in the source."""

    document: WorkflowDocument
    format: DocumentFormat
    raw: Any
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict)

    def line_of(self, path: tuple[str | int, ...]) -> int | None:
        """The source line of ``path`` or of its nearest ancestor that has one (1-based)."""
        return line_of(self.lines, path)


def line_of(lines: dict[tuple[str | int, ...], int], path: tuple[str | int, ...]) -> int | None:
    """The line of ``path`` or of its nearest ancestor in ``lines`` (None when unknown)."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return None


def detect_format(name: str, text: str) -> DocumentFormat:
    """The format from a file name's suffix, else from the first character of the text."""
    lowered = name.lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith(".xml"):
        return "xml"
    if lowered.endswith((".yaml", ".yml")):
        return "yaml"
    stripped = text.lstrip()
    if stripped.startswith("<"):
        return "xml"
    if stripped.startswith("{"):
        return "json"
    return "yaml"


def parse_raw(text: str, fmt: DocumentFormat) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    """The document as plain data, and the line of each mapping key (YAML only)."""
    if len(text.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise WorkflowInvalidError(
            f"the document is larger than {MAX_DOCUMENT_BYTES} bytes",
            violations=[_violation("(document)", "max_size", "document too large")],
        )
    if fmt == "json":
        try:
            data = loads_json(text, MAX_DEPTH)
        except TooDeep as exc:
            raise _too_deep(exc.path, None) from None
        except json.JSONDecodeError as exc:
            raise WorkflowInvalidError(
                f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                violations=[
                    _violation("(document)", "syntax", exc.msg, line=exc.lineno, column=exc.colno)
                ],
            ) from None
        return data, {}
    if fmt == "xml":
        return xml_to_mapping(text), {}
    return _parse_yaml(text)


def load_document(
    text: str, *, name: str = "", fmt: DocumentFormat | None = None
) -> LoadedDocument:
    """Parse and model-check a document; :class:`WorkflowInvalidError` lists every violation."""
    fmt = fmt or detect_format(name, text)
    raw, lines = parse_raw(text, fmt)
    if not isinstance(raw, dict):
        raise WorkflowInvalidError(
            "a workflow document must be a mapping with 'workflows'",
            violations=[
                _violation("(document)", "type", "expected a mapping", actual=type(raw).__name__)
            ],
        )
    try:
        document = WorkflowDocument.model_validate(raw)
    except ValidationError as exc:
        violations = []
        for err in exc.errors(include_url=False):
            path = _model_path(err["loc"])
            violations.append(
                _violation(
                    _dotted(path),
                    err["type"],
                    err["msg"],
                    line=line_of(lines, path),
                    actual=_short(err.get("input")),
                )
            )
        raise WorkflowInvalidError(
            f"the document has {len(violations)} violation(s)", violations=violations
        ) from None
    return LoadedDocument(document, fmt, raw, lines)


# --- YAML -----------------------------------------------------------------------------------
def _parse_yaml(text: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    try:
        root = yaml.compose(text, Loader=_Yaml12Loader)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from None
    if root is None:
        return None, {}
    lines: dict[tuple[str | int, ...], int] = {}
    for count, (path, node, depth) in enumerate(_walk(root, ()), start=1):
        if count > MAX_NODES:
            raise WorkflowInvalidError(
                f"the document expands to more than {MAX_NODES} values (alias bomb?)",
                violations=[_violation("(document)", "max_nodes", "too many values")],
            )
        if depth > MAX_DEPTH:
            raise WorkflowInvalidError(
                f"the document nests deeper than {MAX_DEPTH} levels",
                violations=[
                    _violation(
                        _dotted(path),
                        "max_depth",
                        "nested too deeply",
                        line=node.start_mark.line + 1,
                    )
                ],
            )
        lines.setdefault(path, node.start_mark.line + 1)
    loader = _Yaml12Loader("")
    try:
        data = loader.construct_document(root)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        # Unknown tags, unhashable keys, impossible dates (2026-02-30): the text parsed, but
        # a value cannot be built from it.
        raise _yaml_error(exc) from None
    finally:
        loader.dispose()
    return data, lines


def _yaml_error(exc: Exception) -> WorkflowInvalidError:
    line, column, problem = syntax_position(exc)
    where = f" at line {line}, column {column}" if line else ""
    return WorkflowInvalidError(
        f"invalid YAML{where}: {problem}",
        violations=[_violation("(document)", "syntax", str(problem), line=line, column=column)],
    )


def _walk(
    node: yaml.Node, path: tuple[str | int, ...], depth: int = 0
) -> Iterator[tuple[tuple[str | int, ...], yaml.Node, int]]:
    yield path, node, depth
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            key_path = (*path, str(key.value))
            yield key_path, key, depth + 1
            yield from _walk(value, key_path, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _walk(item, (*path, index), depth + 1)


def _too_deep(path: tuple[str | int, ...] | None, line: int | None) -> WorkflowInvalidError:
    where = f" (at {shorten(_dotted(path))})" if path else f" (line {line})" if line else ""
    return WorkflowInvalidError(
        f"the document nests deeper than {MAX_DEPTH} levels{where}",
        violations=[
            _violation(
                _dotted(path or ()),
                "max_depth",
                f"nested deeper than {MAX_DEPTH} levels",
                line=line,
                expected=MAX_DEPTH,
            )
        ],
    )


# --- violations -----------------------------------------------------------------------------
_UNION_TAGS = KIND_NAMES


def _model_path(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """Drop pydantic's union tags (``graph.decide.branch.on`` → ``graph.decide.on``)."""
    out: list[str | int] = []
    for index, part in enumerate(loc):
        if (
            isinstance(part, str)
            and part in _UNION_TAGS
            and index >= 1
            and index + 1 <= len(loc)
            and _is_node_position(loc, index)
        ):
            continue
        out.append(part)
    return tuple(out)


def _is_node_position(loc: tuple[Any, ...], index: int) -> bool:
    parent = loc[index - 2] if index >= 2 else None
    return parent in ("graph", "branches") or loc[index - 1] == "step"


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path) or "(document)"


def _short(value: Any) -> Any:
    text = repr(value)
    return value if len(text) <= 120 else text[:117] + "..."


def _violation(
    path: str,
    rule: str,
    message: str,
    *,
    line: int | None = None,
    column: int | None = None,
    expected: Any = None,
    actual: Any = None,
) -> dict[str, Any]:
    found = {
        "path": path,
        "rule": rule,
        "message": message,
        "line": line,
        "expected": expected,
        "actual": actual,
        "severity": "error",
    }
    if column is not None:  # known for syntax errors (the parser's mark), 1-based
        found["column"] = column
    return found


__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_NODES",
    "DocumentFormat",
    "LoadedDocument",
    "detect_format",
    "line_of",
    "load_document",
    "parse_raw",
]
