"""Workflow files on disk: reading them, their versions, and edits that keep their layout.

- A file's ``version`` is the hash of its text (``atomic_files.content_version``); a write names
  the version it replaces, or asks to overwrite (:func:`check_version`).
- Rename and remove edit the text (:func:`rewrite_document`): YAML line by line (the workflow's
  key, the ``workflow:`` values of sub-workflow calls, or the removed workflow's lines with its
  leading comments), XML on the parsed element spans (attribute values, or the removed
  ``<workflow>`` element with the comment before it); JSON is re-serialised. An edit is kept
  only if it loads back to exactly the model the same change gives on the parsed data;
  otherwise YAML is re-serialised (comments are lost) and XML is refused with
  :class:`ConflictError` (a safeguard: an edit on the parsed spans of a document that loads
  always passes that check).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

import yaml

from dynamic_tools.atomic_files import content_version
from dynamic_tools.engine.loaders import DocumentFormat, LoadedDocument, load_document, parse_raw
from dynamic_tools.engine.models import (
    IDENTIFIER,
    Workflow,
    WorkflowDocument,
)
from dynamic_tools.engine.nodes import sub_workflows
from dynamic_tools.engine.validator import ValidationReport
from dynamic_tools.errors import ConflictError, ConflictKind, WorkflowInvalidError
from dynamic_tools.violations import LoadProblem, errors_only

SUFFIXES: dict[str, DocumentFormat] = {
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".xml": "xml",
}
EXTENSIONS: dict[str, str] = {"yaml": ".yaml", "json": ".json", "xml": ".xml"}
FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,120}\.(yaml|yml|json|xml)$")

Violations = list[dict[str, Any]]
PathKey = tuple[str | int, ...]


@dataclass
class DocumentFile:
    """One file of the directory: its text, version, parsed form and violations."""

    path: Path
    text: str
    version: str
    format: DocumentFormat
    loaded: LoadedDocument | None
    violations: Violations = field(default_factory=list)
    report: ValidationReport | None = None

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name

    @property
    def errors(self) -> Violations:
        """Violations that stop a run."""
        return errors_only(self.violations)

    @property
    def workflows(self) -> list[Workflow]:
        """The workflows it defines (none when it does not load)."""
        return list(self.loaded.document.workflows.values()) if self.loaded else []


def violation(path: str, rule: str, message: str, actual: Any = None) -> dict[str, Any]:
    """A violation in the validator's shape."""
    return {
        "path": path,
        "rule": rule,
        "message": message,
        "line": None,
        "expected": None,
        "actual": actual,
        "severity": "error",
    }


def read_document_file(path: Path, problems: list[LoadProblem]) -> DocumentFile:
    """Read and parse one file; a failure is appended to ``problems``, never raised."""
    fmt = SUFFIXES[path.suffix]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(LoadProblem(path.name, "unreadable", str(exc)))
        return DocumentFile(path, "", "", fmt, None, [violation("(file)", "unreadable", str(exc))])
    try:
        loaded = load_document(text, name=path.name, fmt=fmt)
    except WorkflowInvalidError as exc:
        line = next((v.get("line") for v in exc.violations if v.get("line")), None)
        problems.append(LoadProblem(path.name, "invalid", exc.message, line, exc.violations))
        return DocumentFile(path, text, content_version(text), fmt, None, exc.violations)
    return DocumentFile(path, text, content_version(text), fmt, loaded)


def check_version(path: Path, expected: str | None, overwrite: bool) -> None:
    """Raise :class:`ConflictError` unless a write over ``path`` may go ahead.

    The version on disk must equal ``expected``; without ``expected`` the file must not exist
    (or ``overwrite`` is set).
    """
    current = content_version(path.read_text(encoding="utf-8")) if path.exists() else None
    context = {"file": path.name, "expected_version": expected, "current_version": current}
    if expected is not None and current is None:
        raise ConflictError(
            f"{path.name} does not exist any more", kind=ConflictKind.VERSION, context=context
        )
    if expected is not None and expected != current:
        raise ConflictError(
            f"{path.name} changed since version {expected} (now {current})",
            kind=ConflictKind.VERSION,
            context=context,
        )
    if expected is None and current is not None and not overwrite:
        raise ConflictError(
            f"{path.name} exists; send its expected_version (or overwrite)",
            kind=ConflictKind.VERSION,
            context=context,
        )


def workflow_calls(workflow: Workflow) -> set[str]:
    """Ids of the sub-workflows a workflow calls (nodes, parallel branches, foreach steps)."""
    return set(sub_workflows(workflow.graph.values()))


# --- edits ----------------------------------------------------------------------------------
def rewrite_document(
    loaded: LoadedDocument | None,
    text: str,
    name: str,
    *,
    rename: tuple[str, str] | None = None,
    remove: str | None = None,
) -> str:
    """``text`` (the source of ``loaded``) with one workflow renamed or removed.

    Args:
        loaded: the parsed document.
        text: its source text.
        name: the file name (for errors).
        rename: ``(old id, new id)``: the workflow and every sub-workflow call to it.
        remove: the id of a workflow to remove.
    """
    if loaded is None:
        raise ConflictError(
            f"{name} does not load; edit the file itself",
            kind=ConflictKind.UNSAFE_EDIT,
            context={"file": name},
        )
    raw = copy.deepcopy(loaded.raw)
    refs: list[PathKey] = []
    if rename is not None:
        old, new = rename
        found = list(_references(raw, old))
        refs = [path for path, _ in found]
        for _, item in found:
            item["workflow"] = new
        if old in raw["workflows"]:
            raw["workflows"] = {(new if k == old else k): v for k, v in raw["workflows"].items()}
    if remove is not None:
        raw["workflows"].pop(remove)
    expected = WorkflowDocument.model_validate(raw).model_dump()
    if loaded.format == "json":
        return json.dumps(raw, indent=2, ensure_ascii=False) + "\n"
    if loaded.format == "yaml":
        lines, where = text.splitlines(keepends=True), loaded.lines
        edit = _yaml_rename(lines, where, rename, refs) if rename else None
        edit = _yaml_remove(lines, where, remove) if remove else edit
    else:
        edit = _xml_edit(text, rename, remove)
    if edit is not None:
        try:
            if load_document(edit, fmt=loaded.format).document.model_dump() == expected:
                return edit
        except WorkflowInvalidError:
            pass
    if loaded.format == "yaml":
        return yaml.safe_dump(raw, sort_keys=False, allow_unicode=True)
    raise ConflictError(
        f"{name} could not be rewritten safely; edit the file itself",
        kind=ConflictKind.UNSAFE_EDIT,
        context={"file": name},
    )


def _references(raw: dict[str, Any], target: str) -> Iterator[tuple[PathKey, Any]]:
    """``(path, mapping)`` of every ``workflow: target`` sub-workflow call in raw data."""
    for workflow_id, workflow in (raw.get("workflows") or {}).items():
        graph = workflow.get("graph") if isinstance(workflow, dict) else None
        for node_id, node in (graph or {}).items():
            if not isinstance(node, dict):
                continue
            items: list[tuple[PathKey, Any]] = [((node_id,), node)]
            branches = node.get("branches")
            if isinstance(branches, dict):
                items += [((node_id, "branches", k), v) for k, v in branches.items()]
            elif isinstance(branches, list):
                items += [((node_id, "branches", i), v) for i, v in enumerate(branches)]
            items.append(((node_id, "step"), node.get("step")))
            for sub, item in items:
                if isinstance(item, dict) and item.get("workflow") == target:
                    yield ("workflows", workflow_id, "graph", *sub, "workflow"), item


def _yaml_rename(
    lines: list[str], where: dict[PathKey, int], rename: tuple[str, str], refs: list[PathKey]
) -> str | None:
    old, new = rename
    lines = list(lines)
    edits = [(where.get(("workflows", old)), rf"^(\s*)(['\"]?){re.escape(old)}\2(\s*:)")]
    edits += [
        (where.get(p), rf"(\bworkflow\s*:\s*)(['\"]?){re.escape(old)}\2(?![\w-])") for p in refs
    ]
    for line, pattern in edits:
        if line is None:
            return None
        replacement = rf"\g<1>\g<2>{new}\g<2>" + (r"\g<3>" if pattern.startswith("^") else "")
        lines[line - 1], count = re.subn(pattern, replacement, lines[line - 1], count=1)
        if count != 1:
            return None
    return "".join(lines)


def _yaml_remove(lines: list[str], where: dict[PathKey, int], workflow_id: str) -> str | None:
    start = where.get(("workflows", workflow_id))
    if start is None:
        return None
    later = [
        line
        for path, line in where.items()
        if line > start and (len(path) == 1 or (len(path) == 2 and path[0] == "workflows"))
    ]
    first, last = start - 1, min(later, default=len(lines) + 1) - 1
    while last > first + 1 and (not lines[last - 1].strip() or _comment(lines[last - 1])):
        last -= 1
    while first > 0 and _comment(lines[first - 1]):
        first -= 1
    return "".join(lines[:first] + lines[last:])


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _xml_edit(text: str, rename: tuple[str, str] | None, remove: str | None) -> str | None:
    """Rename or remove a workflow in XML text, changing nothing else (comments included).

    The text is parsed (expat, DTDs and entities refused as defusedxml does) to find the
    exact byte spans of the elements concerned: the ``<workflow>`` children of the root and,
    for a rename, every element whose ``workflow`` attribute names the old id (sub-workflow
    calls). Only those attribute values, or that one element (with its indentation, its line
    break and the comment just before it), are edited.
    """
    data = text.encode("utf-8")
    try:
        elements, comments = _xml_spans(data)
    except (expat.ExpatError, ValueError):
        return None
    edits: list[tuple[int, int, bytes] | None] = []
    if rename is not None:
        old, new = rename
        for element in elements:
            if element.depth == 1 and element.tag == "workflow" and element.attrs.get("id") == old:
                edits.append(_attribute_edit(data, element, "id", new))
            elif element.depth > 1 and element.attrs.get("workflow") == old:
                edits.append(_attribute_edit(data, element, "workflow", new))
    else:
        matches = [
            e
            for e in elements
            if e.depth == 1 and e.tag == "workflow" and e.attrs.get("id") == remove
        ]
        if len(matches) != 1:
            return None
        edits.append(_element_removal(data, matches[0], comments))
    spans = [edit for edit in edits if edit is not None]
    if not spans or len(spans) != len(edits):
        return None
    for begin, end, replacement in sorted(spans, reverse=True):
        data = data[:begin] + replacement + data[end:]
    return data.decode("utf-8")


_ATTRIBUTE = re.compile(rb"""\s([\w:.-]+)\s*=\s*("[^"]*"|'[^']*')""")


@dataclass(frozen=True)
class _XmlElement:
    tag: str
    attrs: dict[str, str]
    depth: int  # 0 for the root
    start: int  # byte offset of "<"
    start_tag_end: int  # just after the start tag's ">"
    end: int  # just after the element (its end tag, or the "/>")


def _xml_spans(data: bytes) -> tuple[list[_XmlElement], list[tuple[int, int]]]:
    """Every element (with its byte spans) and every comment span of an XML document."""
    parser = expat.ParserCreate(encoding="UTF-8")

    def refuse(*_: Any) -> Any:
        raise ValueError("DTDs and entities are not allowed")

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    elements: list[_XmlElement] = []
    comments: list[tuple[int, int]] = []
    stack: list[tuple[str, dict[str, str], int, int]] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        begin = parser.CurrentByteIndex
        stack.append((tag, attrs, begin, _tag_end(data, begin)))

    def end(tag: str) -> None:
        name, attrs, begin, start_tag_end = stack.pop()
        if data[start_tag_end - 2 : start_tag_end] == b"/>":
            finish = start_tag_end  # <tag ... />
        else:
            finish = _tag_end(data, parser.CurrentByteIndex)
        elements.append(_XmlElement(name, attrs, len(stack), begin, start_tag_end, finish))

    def comment(_: str) -> None:
        begin = parser.CurrentByteIndex
        comments.append((begin, data.index(b"-->", begin) + 3))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CommentHandler = comment
    parser.Parse(data, True)
    return sorted(elements, key=lambda e: e.start), comments


def _tag_end(data: bytes, begin: int) -> int:
    """Just after the ``>`` closing the tag that starts at ``begin`` (quotes respected)."""
    quote = 0
    for index in range(begin, len(data)):
        char = data[index]
        if quote:
            if char == quote:
                quote = 0
        elif char in b"\"'":
            quote = char
        elif char == ord(">"):
            return index + 1
    raise ValueError("unterminated tag")


def _attribute_edit(
    data: bytes, element: _XmlElement, name: str, value: str
) -> tuple[int, int, bytes] | None:
    """Replace the value of attribute ``name`` in the element's start tag."""
    tag = data[element.start : element.start_tag_end]
    # Attributes left to right, each value consumed whole (a value may contain "id='x'").
    found = [m for m in _ATTRIBUTE.finditer(tag) if m.group(1) == name.encode()]
    if len(found) != 1:
        return None
    quote = found[0].group(2)[:1]
    begin = element.start + found[0].start(2)
    return begin, element.start + found[0].end(2), quote + value.encode() + quote


def _element_removal(
    data: bytes, element: _XmlElement, comments: list[tuple[int, int]]
) -> tuple[int, int, bytes]:
    """The span of an element, with its indentation, line break and the comment before it."""
    begin, end = element.start, element.end
    while begin > 0 and data[begin - 1 : begin] in (b" ", b"\t"):
        begin -= 1
    before = [
        c
        for c in comments
        if c[1] <= begin and not data[c[1] : begin].strip() and data[c[1] : begin].count(b"\n") < 2
    ]
    if before:  # a comment just before the element (only whitespace between) goes too
        first = before[-1][0]
        while first > 0 and data[first - 1 : first] in (b" ", b"\t"):
            first -= 1
        if first == 0 or data[first - 1 : first] == b"\n":
            begin = first
    while end < len(data) and data[end : end + 1] in (b" ", b"\t"):
        end += 1
    if data[end : end + 2] == b"\r\n":
        end += 2
    elif data[end : end + 1] == b"\n":
        end += 1
    return begin, end, b""


def target_file(
    target: str | None, content: str, fmt: DocumentFormat, owner: Callable[[str], str | None]
) -> tuple[str | None, str | None]:
    """The workflow id and the file name a save of ``content`` to ``target`` is about.

    ``target`` is a file name, a workflow id or None (the document's first workflow id, when
    it parses that far); the file is the one holding that workflow (``owner``) or the one a
    save would create. Either is None when it cannot be told.
    """
    if target and FILE_NAME.match(target):
        return None, target
    workflow_id = target if target and re.match(IDENTIFIER, target) else None
    if workflow_id is None:
        try:
            raw, _ = parse_raw(content, fmt)
        except WorkflowInvalidError:
            return None, None
        workflows = raw.get("workflows") if isinstance(raw, dict) else None
        first = next(iter(workflows), None) if isinstance(workflows, dict) else None
        workflow_id = first if isinstance(first, str) and re.match(IDENTIFIER, first) else None
    if workflow_id is None:
        return None, None
    return workflow_id, owner(workflow_id) or workflow_id + EXTENSIONS[fmt]
