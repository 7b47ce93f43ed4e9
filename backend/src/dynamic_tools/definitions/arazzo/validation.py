"""Checking an Arazzo 1.0 document against the OAI JSON Schema and what it cannot say.

Every problem comes with its path and line; nothing is written.

Beyond the schema (``schema-1.0.json``, the OAI's Arazzo 1.0 schema, Apache-2.0):

- workflow ids, step ids (per workflow) and source description names are unique;
- a step's ``workflowId`` names a workflow of this document (or
  ``$sourceDescriptions.<name>.<id>`` an Arazzo source); ``dependsOn`` likewise;
- a step's ``operationId`` exists in its OpenAPI source, and an ``operationPath``
  (``{$sourceDescriptions.<name>.url}#/paths/~1pets/get``) points at an operation — when the
  source could be read (otherwise a warning says it was not checked);
- runtime expressions name what exists: ``$steps.<id>`` a step of the same workflow,
  ``$inputs.<name>`` a declared input, ``$workflows.<id>`` a workflow,
  ``$components.<kind>.<name>`` a component, ``$sourceDescriptions.<name>`` a source;
- a ``goto`` names a step of the workflow or a workflow, and ``reference`` a component.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from dynamic_tools.definitions.arazzo.expressions import listing, name_alternation, split_name
from dynamic_tools.engine.loaders import detect_format, line_of, parse_raw
from dynamic_tools.errors import DynamicToolsError

SCHEMA_FILE = Path(__file__).with_name("schema-1.0.json")
MAX_SCHEMA_ERRORS = 100
OPERATION_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
_PLAIN = re.compile(r"[A-Za-z0-9_\-]+")
_MUST_NAME = re.compile(r"[a-zA-Z0-9.\-_]+")
_OPERATION_REF = re.compile(r"^\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.(.+)$")
_OPERATION_PATH = re.compile(r"^\{\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.url\}#(/.*)$")

Path_ = tuple[str | int, ...]


@lru_cache(maxsize=1)
def arazzo_schema() -> dict[str, Any]:
    """The OAI JSON Schema of Arazzo 1.0 documents."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


@dataclass
class ArazzoCheck:
    """What a check found: the document's workflows and sources, and its problems."""

    valid: bool
    arazzo_version: str | None
    title: str | None
    workflows: list[str]
    sources: list[dict[str, Any]]
    violations: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict, repr=False)
    """The line of each mapping key (for problems found after the check, e.g. converting)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "valid": self.valid,
            "document_kind": "arazzo",
            "arazzo_version": self.arazzo_version,
            "title": self.title,
            "workflows": self.workflows,
            "sources": self.sources,
            "violations": self.violations,
            "warnings": self.warnings,
        }


def is_arazzo(raw: Any) -> bool:
    """Whether parsed data is an Arazzo document (it has ``arazzo: 1.x``)."""
    return isinstance(raw, dict) and isinstance(raw.get("arazzo"), str)


def check_arazzo(
    text: str,
    *,
    name: str = "",
    sources: Mapping[str, Any] | None = None,
    unread: Mapping[str, str] | None = None,
) -> ArazzoCheck:
    """Check an Arazzo document's text.

    ``sources`` maps source names to their parsed OpenAPI documents (a name missing: not read,
    its operations are not checked); ``unread`` says why a source could not be read.
    """
    try:
        raw, lines = parse_raw(text, detect_format(name or "document.yaml", text))
    except DynamicToolsError as exc:
        return ArazzoCheck(False, None, None, [], [], violations=_as_dicts(exc))
    report = _Report(lines)
    if not isinstance(raw, dict):
        report.error(
            (), "type", "an Arazzo document is a mapping with 'arazzo', 'info' and 'workflows'"
        )
        return ArazzoCheck(False, None, None, [], [], violations=report.errors)
    for error in sorted(
        Draft202012Validator(arazzo_schema()).iter_errors(raw), key=lambda e: list(e.absolute_path)
    )[:MAX_SCHEMA_ERRORS]:
        rule, message = _schema_problem(error.instance, error.message)
        if rule is not None:
            report.error(tuple(error.absolute_path), rule, message)
    _Rules(raw, report, sources or {}).check()
    for index, source in enumerate(_list(raw.get("sourceDescriptions"))):
        why = (unread or {}).get(str(source.get("name"))) if isinstance(source, dict) else None
        if why:
            report.warning(("sourceDescriptions", index, "url"), "source_not_read", why)
    workflows = [
        str(w.get("workflowId")) for w in _list(raw.get("workflows")) if isinstance(w, dict)
    ]
    found_sources = [
        {"name": s.get("name"), "url": s.get("url"), "type": s.get("type", "openapi")}
        for s in _list(raw.get("sourceDescriptions"))
        if isinstance(s, dict)
    ]
    found_info = raw.get("info")
    info: dict[str, Any] = found_info if isinstance(found_info, dict) else {}
    return ArazzoCheck(
        valid=not report.errors,
        arazzo_version=str(raw.get("arazzo")) if raw.get("arazzo") is not None else None,
        title=info.get("title") if isinstance(info.get("title"), str) else None,
        workflows=workflows,
        sources=found_sources,
        violations=report.errors,
        warnings=report.warnings,
        lines=lines,
    )


class _Report:
    def __init__(self, lines: dict[tuple[str | int, ...], int]) -> None:
        self.lines = lines
        self.errors: list[dict[str, Any]] = []
        self.warnings: list[dict[str, Any]] = []

    def _item(self, path: Path_, rule: str, message: str) -> dict[str, Any]:
        return {
            "path": ".".join(str(p) for p in path) or "(document)",
            "rule": rule,
            "message": message,
            "line": line_of(self.lines, path) or (1 if not path else None),
        }

    def error(self, path: Path_, rule: str, message: str) -> None:
        self.errors.append(self._item(path, rule, message))

    def warning(self, path: Path_, rule: str, message: str) -> None:
        self.warnings.append({**self._item(path, rule, message), "severity": "warning"})


class _Rules:
    """The rules the schema cannot express, over a (possibly schema-invalid) document."""

    def __init__(self, raw: dict[str, Any], report: _Report, sources: Mapping[str, Any]) -> None:
        self.raw = raw
        self.report = report
        self.sources = sources
        self.workflows = [w for w in _list(raw.get("workflows")) if isinstance(w, dict)]
        self.workflow_ids = {str(w.get("workflowId")) for w in self.workflows}
        self.source_types = {
            str(s.get("name")): str(s.get("type", "openapi"))
            for s in _list(raw.get("sourceDescriptions"))
            if isinstance(s, dict)
        }
        components = raw.get("components")
        self.components = components if isinstance(components, dict) else {}

    def check(self) -> None:
        self._unique(
            [
                ("sourceDescriptions", i, s.get("name"))
                for i, s in _enum(self.raw, "sourceDescriptions")
            ],
            "duplicate_source",
            "source description",
        )
        self._unique(
            [("workflows", i, w.get("workflowId")) for i, w in _enum(self.raw, "workflows")],
            "duplicate_workflow_id",
            "workflowId",
        )
        for index, workflow in _enum(self.raw, "workflows"):
            self._workflow(("workflows", index), workflow)
        for kind, entries in self.components.items():
            for key in entries if isinstance(entries, dict) else ():
                if not _MUST_NAME.fullmatch(str(key)):
                    self.report.error(
                        ("components", kind, key),
                        "name_pattern",
                        f"component name '{key}' must match {_MUST_NAME.pattern} (Arazzo 1.0)",
                    )

    def _unique(self, named: list[tuple[Any, ...]], rule: str, what: str) -> None:
        seen: set[Any] = set()
        for *where, value in named:
            if value is None:
                continue
            if value in seen:
                self.report.error(
                    (*where, "name" if what == "source description" else what),
                    rule,
                    f"{what} '{value}' is used twice",
                )
            seen.add(value)

    def _workflow(self, here: Path_, workflow: dict[str, Any]) -> None:
        steps = [s for s in _list(workflow.get("steps")) if isinstance(s, dict)]
        step_ids = [s.get("stepId") for s in steps]
        self._unique(
            [(*here, "steps", i, s.get("stepId")) for i, s in enumerate(steps)],
            "duplicate_step_id",
            "stepId",
        )
        inputs = self._inputs(workflow.get("inputs"))
        known_steps = {str(s) for s in step_ids if s is not None}
        for position, dependency in enumerate(_list(workflow.get("dependsOn"))):
            self._workflow_ref((*here, "dependsOn", position), dependency)
        for index, step in enumerate(steps):
            at = (*here, "steps", index)
            if "workflowId" in step:
                self._workflow_ref((*at, "workflowId"), step["workflowId"])
            if "operationId" in step:
                self._operation_id((*at, "operationId"), step["operationId"])
            if "operationPath" in step:
                self._operation_path((*at, "operationPath"), step["operationPath"])
            for key in ("onSuccess", "onFailure"):
                for position, action in enumerate(_list(step.get(key))):
                    self._action((*at, key, position), action, known_steps)
            for position, parameter in enumerate(_list(step.get("parameters"))):
                if isinstance(parameter, dict) and "reference" in parameter:
                    self._component_ref(
                        (*at, "parameters", position, "reference"), parameter["reference"]
                    )
        for key in ("successActions", "failureActions"):
            for position, action in enumerate(_list(workflow.get(key))):
                self._action((*here, key, position), action, known_steps)
        names = {"steps": known_steps, "inputs": inputs or set(), "workflows": self.workflow_ids}
        names["sourceDescriptions"] = set(self.source_types)
        pattern = _expression_pattern(frozenset().union(*names.values(), self.components))
        for path, text in _strings(workflow, here):
            self._expressions(path, text, known_steps, inputs, pattern)
        self._names(here, workflow, steps)

    def _names(self, here: Path_, workflow: dict[str, Any], steps: list[dict[str, Any]]) -> None:
        """The spec's name patterns: outputs MUST match one, ids SHOULD (warned)."""
        named: list[tuple[Path_, Any]] = [((*here, "outputs"), workflow.get("outputs"))]
        named += [((*here, "steps", i, "outputs"), s.get("outputs")) for i, s in enumerate(steps)]
        for where, outputs in named:
            for key in outputs if isinstance(outputs, dict) else ():
                if not _MUST_NAME.fullmatch(str(key)):
                    self.report.error(
                        (*where, key),
                        "name_pattern",
                        f"output name '{key}' must match {_MUST_NAME.pattern} (Arazzo 1.0)",
                    )
        ids = [((*here, "workflowId"), workflow.get("workflowId"), "workflowId")]
        ids += [
            ((*here, "steps", i, "stepId"), s.get("stepId"), "stepId") for i, s in enumerate(steps)
        ]
        for where, value, what in ids:
            if isinstance(value, str) and not _PLAIN.fullmatch(value):
                self.report.warning(
                    where,
                    "name_pattern",
                    f"{what} '{value}' should match {_PLAIN.pattern} (Arazzo 1.0); it is read "
                    "as written",
                )

    def _inputs(self, inputs: Any) -> set[str] | None:
        """The declared input names (None: not known, e.g. a $ref that does not resolve)."""
        if isinstance(inputs, dict) and "$ref" in inputs:
            ref = str(inputs["$ref"])
            if ref.startswith("#/components/inputs/"):
                inputs = self.components.get("inputs", {}).get(ref.rsplit("/", 1)[-1])
            else:
                return None
        if not isinstance(inputs, dict):
            return set()
        properties = inputs.get("properties")
        return set(properties) if isinstance(properties, dict) else None

    def _workflow_ref(self, path: Path_, value: Any) -> None:
        text = str(value)
        match = _OPERATION_REF.match(text)
        if match:
            source = match.group(1)
            if source not in self.source_types:
                self.report.error(path, "unknown_source", f"no source description named '{source}'")
            elif self.source_types[source] != "arazzo":
                self.report.error(path, "not_arazzo_source", f"'{source}' is not an Arazzo source")
            return
        if text not in self.workflow_ids:
            self.report.error(
                path,
                "unknown_workflow",
                f"no workflow '{text}' in this document "
                f"(workflows: {', '.join(sorted(self.workflow_ids))})",
            )

    def _operation_id(self, path: Path_, value: Any) -> None:
        text = str(value)
        match = _OPERATION_REF.match(text)
        openapi = [n for n, t in self.source_types.items() if t == "openapi"]
        if match:
            source, operation = match.group(1), match.group(2)
            if source not in self.source_types:
                self.report.error(path, "unknown_source", f"no source description named '{source}'")
                return
            candidates = [source]
        else:
            operation, candidates = text, openapi
            if len(openapi) > 1:
                self.report.warning(
                    path,
                    "ambiguous_operation",
                    "several OpenAPI sources: write "
                    f"$sourceDescriptions.<name>.{text} to say which",
                )
        read = [c for c in candidates if self.sources.get(c) is not None]
        if not read:
            self.report.warning(
                path,
                "source_not_read",
                f"operation '{operation}' not checked: its source was not read",
            )
            return
        known = set().union(*(_operation_ids(self.sources[c]) for c in read))
        if operation in known:
            return
        same = [k for k in known if k.casefold() == operation.casefold()]
        if len(same) == 1:  # lenient: documents in the wild differ in case only
            self.report.warning(
                path, "operation_case", f"operation '{operation}' matched '{same[0]}' by case"
            )
            return
        source, _, named = operation.partition(".")
        if source in self.source_types and named in _operation_ids(self.sources.get(source)):
            self.report.error(
                path,
                "operation_shortcut",
                f"'{operation}' names operation '{named}' of source '{source}' as some runners "
                f"read it; write $sourceDescriptions.{source}.{named}",
            )
            return
        self.report.error(
            path, "unknown_operation", f"no operation '{operation}' in {', '.join(read)}"
        )

    def _operation_path(self, path: Path_, value: Any) -> None:
        match = _OPERATION_PATH.match(str(value))
        if not match:
            self.report.error(
                path,
                "operation_path",
                "an operationPath is "
                "'{$sourceDescriptions.<name>.url}#<JSON pointer to an operation>'",
            )
            return
        source, pointer = match.group(1), match.group(2)
        if source not in self.source_types:
            self.report.error(path, "unknown_source", f"no source description named '{source}'")
            return
        document = self.sources.get(source)
        if document is None:
            self.report.warning(
                path, "source_not_read", "operationPath not checked: its source was not read"
            )
            return
        target = _pointer(document, pointer)
        if target is None:
            self.report.error(
                path, "unresolvable_operation_path", f"{pointer} is not in '{source}'"
            )
        elif not (
            isinstance(target, dict) and pointer.rsplit("/", 1)[-1].lower() in OPERATION_METHODS
        ):
            methods = (
                [m for m in target if m in OPERATION_METHODS] if isinstance(target, dict) else []
            )
            if len(methods) == 1:
                self.report.warning(
                    path,
                    "operation_path_not_operation",
                    f"{pointer} is a path item, not an operation: its only operation "
                    f"({methods[0].upper()}) is taken; add /{methods[0]} to say so",
                )
            else:
                self.report.error(
                    path,
                    "operation_path_not_operation",
                    f"{pointer} is a path item with "
                    + (f"{len(methods)} operations" if methods else "no operation")
                    + ": add the method of the one meant (e.g. /get)",
                )

    def _action(self, path: Path_, action: Any, steps: set[str]) -> None:
        if not isinstance(action, dict):
            return
        if "reference" in action:
            self._component_ref((*path, "reference"), action["reference"])
            return
        if action.get("type") == "goto":
            if "stepId" in action and str(action["stepId"]) not in steps:
                self.report.error(
                    (*path, "stepId"),
                    "unknown_goto_target",
                    f"no step '{action['stepId']}' in this workflow" + listing("steps", steps),
                )
            if "workflowId" in action:
                self._workflow_ref((*path, "workflowId"), action["workflowId"])

    def _component_ref(self, path: Path_, value: Any) -> None:
        match = re.match(r"^\$components\.([A-Za-z]+)\.([A-Za-z0-9_.\-]+)$", str(value))
        if not match or match.group(2) not in (self.components.get(match.group(1)) or {}):
            self.report.error(path, "unknown_component", f"'{value}' names no component")

    def _expressions(
        self,
        path: Path_,
        text: str,
        steps: set[str],
        inputs: set[str] | None,
        pattern: re.Pattern[str],
    ) -> None:
        known = {"steps": steps, "inputs": inputs or set(), "workflows": self.workflow_ids}
        known["sourceDescriptions"] = set(self.source_types)
        for match in pattern.finditer(text):
            kind, rest = match.group(1), match.group(2)
            head, _ = split_name(rest, known.get(kind, ()))
            if kind == "steps" and head not in steps:
                self.report.error(
                    path,
                    "unknown_step",
                    f"$steps.{head}: no step '{head}' in this workflow" + listing("steps", steps),
                )
            elif kind == "inputs" and inputs is not None and head not in inputs:
                self.report.error(
                    path,
                    "unknown_input",
                    f"$inputs.{head}: no input '{head}' is declared" + listing("inputs", inputs),
                )
            elif kind == "workflows" and head not in self.workflow_ids:
                self.report.error(
                    path,
                    "unknown_workflow",
                    f"$workflows.{head}: no workflow '{head}'"
                    + listing("workflows", self.workflow_ids),
                )
            elif kind == "sourceDescriptions" and head not in self.source_types:
                self.report.error(
                    path,
                    "unknown_source",
                    f"$sourceDescriptions.{head}: no such source"
                    + listing("sources", self.source_types),
                )
            elif kind == "components":
                parts = rest.split(".")
                if len(parts) >= 2 and parts[1] not in (self.components.get(parts[0]) or {}):
                    self.report.error(
                        path,
                        "unknown_component",
                        f"$components.{parts[0]}.{parts[1]}: no such component",
                    )


@lru_cache(maxsize=256)
def _expression_pattern(known: frozenset[str]) -> re.Pattern[str]:
    """``$inputs.<name>``, ``$steps.<name>`` …: the known names whole, else a plain name."""
    name = name_alternation(known, r"[A-Za-z0-9_.\-]+")
    return re.compile(
        rf"\$(inputs|steps|workflows|components|sourceDescriptions)\.((?:{name})[A-Za-z0-9_.\-]*)"
    )


def _schema_problem(instance: Any, message: str) -> tuple[str | None, str]:
    """A schema error as a problem: its rule and message (None: the spec allows it).

    Two rules of the OAI's Arazzo 1.0 schema are stricter than the specification's text:
    a criterion whose ``type`` is a Criterion Expression Type Object (``{type: jsonpath,
    version: draft-goessner-dispatch-jsonpath-00}``) is refused by it, though the spec
    allows it (it is read as its ``type``); and a ``retry`` failure action must name a
    ``stepId`` or ``workflowId`` there, while the spec's text reads a retry without one as a
    retry of the step itself (``retry_target``, which lenient mode reads, with a warning).
    """
    if not isinstance(instance, dict):
        return "schema", message
    kind = instance.get("type")
    if isinstance(kind, dict) and "condition" in instance:
        as_text = {**instance, "type": kind.get("type")}
        typed = _schema_part("criterion-expression-type-object").is_valid(kind)
        if typed and _schema_part("criterion-object").is_valid(as_text):
            return None, message
    if kind == "retry" and "stepId" not in instance and "workflowId" not in instance:
        bare = {**instance, "type": "end"}  # the same action, with no target to name
        bare.pop("retryAfter", None)
        bare.pop("retryLimit", None)
        if _schema_part("failure-action-object").is_valid(bare):
            return (
                "retry_target",
                "a retry action names no stepId or workflowId (the Arazzo 1.0 schema asks for "
                "one): it retries the step itself",
            )
    return "schema", message


@lru_cache(maxsize=8)
def _schema_part(name: str) -> Draft202012Validator:
    """A validator of one definition of the Arazzo schema."""
    schema = arazzo_schema()
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def _operation_ids(document: Any) -> set[str]:
    found: set[str] = set()
    paths = document.get("paths") if isinstance(document, dict) else None
    for item in (paths or {}).values() if isinstance(paths, dict) else ():
        if isinstance(item, dict):
            for method, operation in item.items():
                identifier = operation.get("operationId") if isinstance(operation, dict) else None
                if method in OPERATION_METHODS and isinstance(identifier, str):
                    found.add(identifier)
    return found


def _pointer(document: Any, pointer: str) -> Any:
    current = document
    for raw in pointer.lstrip("/").split("/") if pointer.strip("/") else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return None
    return current


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _enum(raw: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, item in enumerate(_list(raw.get(key))):
        if isinstance(item, dict):
            yield index, item


def _strings(value: Any, here: Path_) -> Iterator[tuple[Path_, str]]:
    """Every string inside ``value`` with its path (steps' ids and names are strings too).

    In document order, from an explicit stack (the document is data from outside).
    """
    stack: list[tuple[Any, Path_]] = [(value, here)]
    while stack:
        current, path = stack.pop()
        if isinstance(current, str):
            yield path, current
        elif isinstance(current, dict):
            stack.extend(
                (item, (*path, key))
                for key, item in reversed(current.items())
                if key not in ("inputs", "description", "summary")  # schemas and prose
            )
        elif isinstance(current, list):
            stack.extend((current[i], (*path, i)) for i in reversed(range(len(current))))


def _as_dicts(exc: DynamicToolsError) -> list[dict[str, Any]]:
    violations = getattr(exc, "violations", None) or []
    return [dict(v) for v in violations] or [
        {"path": "(document)", "rule": "syntax", "message": exc.message}
    ]


__all__ = ["ArazzoCheck", "arazzo_schema", "check_arazzo", "is_arazzo"]
