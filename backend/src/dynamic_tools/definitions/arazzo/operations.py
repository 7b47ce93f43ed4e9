"""The operations an Arazzo document's steps use, as tools (through the OpenAPI converter)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dynamic_tools.definitions.arazzo.parts import (
    ArazzoConversion,
    Path_,
    Problem,
    as_list,
    identifier,
)
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.openapi.convert import ConversionOptions, convert_document


@dataclass(frozen=True)
class Operation:
    """A tool and the source description its operation is in."""

    tool: ToolConfig
    source: str


def operation_tools(
    raw: dict[str, Any],
    sources: Mapping[str, Any],
    prefix: str,
    catalog: str,
    base_urls: Mapping[str, str],
    source_urls: Mapping[str, str],
    result: ArazzoConversion,
    key: tuple[str, ...] = (),
) -> dict[tuple[str, str], Operation]:
    """The tools of the operations the steps use, keyed by (source, operationId or METHOD path)."""
    wanted: dict[str, list[str]] = {}
    media: dict[str, dict[str, str]] = {}  # source → operation → the body type its steps send
    for _, step in _all_steps(raw):
        found = operation_of(step, raw, sources)
        if found is not None:
            wanted.setdefault(found[0], []).append(found[1])
            body = step.get("requestBody")
            if isinstance(body, dict) and isinstance(body.get("contentType"), str):
                media.setdefault(found[0], {})[found[1]] = body["contentType"]
    found_ops: dict[tuple[str, str], Operation] = {}
    several = len(wanted) > 1
    where: Path_ = ("sourceDescriptions", *key)
    for source, include in wanted.items():
        source_prefix = identifier(f"{prefix}_{source}" if several else prefix)[:32].strip("_")
        conversion = convert_document(
            sources[source],
            ConversionOptions(
                catalog=catalog,
                prefix=source_prefix,
                base_url=base_urls.get(source),
                document_url=source_urls.get(source),
                include=sorted(set(include)),
                body_media_types=media.get(source, {}),
            ),
        )
        for problem in conversion.violations:
            result.problems.append(Problem(where, "source_invalid", f"{source}: {problem.message}"))
        for problem in conversion.warnings:
            result.problems.append(
                Problem(
                    where,
                    "source_warning",
                    f"{source}: {problem.path}: {problem.message}",
                    "warning",
                )
            )
        for tool, info in zip(conversion.tools, conversion.operations, strict=True):
            result.tools.append(tool)
            op = Operation(tool, source)
            if info.operation_id:
                found_ops[(source, info.operation_id)] = op
            found_ops[(source, f"{info.method.upper()} {info.path}")] = op
    return found_ops


def operation_of(
    step: dict[str, Any], raw: dict[str, Any], sources: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(source name, operationId or ``METHOD /path``) of a step, when it calls an operation."""
    names = [
        str(s.get("name")) for s in as_list(raw.get("sourceDescriptions")) if isinstance(s, dict)
    ]
    if isinstance(step.get("operationId"), str):
        text = step["operationId"]
        match = re.match(r"^\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.(.+)$", text)
        if match:
            names, text = [match.group(1)], match.group(2)
        for name in names:
            if name in sources and text in _operation_ids(sources[name]):
                return name, text
        lowered = text.lower()  # a case-only mismatch was a warning when checked
        for name in names:
            for op_id in _operation_ids(sources.get(name)):
                if op_id.lower() == lowered:
                    return name, op_id
        source, _, operation = text.partition(".")  # <source>.<operationId>: a shortcut
        if source in names and operation in _operation_ids(sources.get(source)):
            return source, operation
        return None
    if isinstance(step.get("operationPath"), str):
        match = _OPERATION_PATH.match(step["operationPath"])
        if match:
            source = match.group("source") or match.group("bare")
            path = match.group("path").replace("~1", "/").replace("~0", "~")
            method = match.group("method") or _only_method(sources.get(source), path)
            if method is not None:
                return source, f"{method.upper()} {path}"
    return None


_OPERATION_PATH = re.compile(
    # as written: {$sourceDescriptions.<name>.url}#/paths/<path>/<method>; the shortcuts
    # some runners accept: no braces or no .url, <name>#/paths/..., a path item's only method
    r"^(?:\{?\$sourceDescriptions\.(?P<source>[A-Za-z0-9_\-]+)(?:\.url)?\}?"
    r"|(?P<bare>[A-Za-z0-9_\-]+))"
    r"#/paths/(?P<path>[^/]+)(?:/(?P<method>get|put|post|delete|options|head|patch|trace))?$"
)


def _only_method(document: Any, path: str) -> str | None:
    """The method of a path item's only operation (None: none, or several)."""
    paths = document.get("paths") if isinstance(document, dict) else None
    item = paths.get(path) if isinstance(paths, dict) else None
    methods = [m for m in (item or {}) if m in _METHODS] if isinstance(item, dict) else []
    return methods[0] if len(methods) == 1 else None


_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def _operation_ids(document: Any) -> set[str]:
    found: set[str] = set()
    paths = document.get("paths") if isinstance(document, dict) else None
    for item in (paths or {}).values() if isinstance(paths, dict) else ():
        if isinstance(item, dict):
            for op in item.values():
                if isinstance(op, dict) and isinstance(op.get("operationId"), str):
                    found.add(op["operationId"])
    return found


def _all_steps(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(workflow.get("workflowId")), step)
        for workflow in as_list(raw.get("workflows"))
        if isinstance(workflow, dict)
        for step in as_list(workflow.get("steps"))
        if isinstance(step, dict)
    ]


__all__ = ["Operation", "operation_of", "operation_tools"]
