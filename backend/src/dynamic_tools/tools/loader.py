"""Reading tool config files: YAML or JSON, one tool or a list per file.

Loading never stops at the first bad file: each problem is reported with the file, the field
and the reason, and every valid tool from every other file still loads.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dynamic_tools.safe_parsing import TooDeep, loads_json, loads_yaml
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.violations import LoadProblem, where_in_text

TOOL_FILE_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class LoadedTool:
    """A valid tool and the file it came from (writes go back to that file)."""

    config: ToolConfig
    file: Path


@dataclass
class LoadResult:
    """Every valid tool found, and every problem met on the way."""

    tools: list[LoadedTool] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)


MAX_FILE_DEPTH = 128  # nesting of a tool file; a schema inside may take 100 (schema_check)


SHARED_MAX_CHARS = 64
"""Strings up to this length in a tool file are interned (see :func:`shared_strings`)."""


def parse_document(text: str, suffix: str) -> Any:
    """Parse YAML (safe loader) or JSON text according to the file suffix.

    Raises :class:`~dynamic_tools.safe_parsing.TooDeep` past ``MAX_FILE_DEPTH`` levels (before the
    recursive YAML composer would fail).
    """
    if suffix == ".json":
        return loads_json(text, MAX_FILE_DEPTH)
    return loads_yaml(text, MAX_FILE_DEPTH)


def shared_strings(value: Any) -> Any:
    """``value`` with its mapping keys and short strings interned (:data:`SHARED_MAX_CHARS`).

    A YAML or JSON parser makes new strings for each file, so 1,000 tools held 1,000 copies of
    ``type``, ``string``, ``description``, their parameter names and enum values; interned,
    each is held once (docs/performance.md, "Memory: idle and at 1,000 tools"). Recursive, once
    per level: the document was parsed with at most :data:`MAX_FILE_DEPTH` levels.
    """
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= SHARED_MAX_CHARS else value
    if isinstance(value, dict):
        return {
            (sys.intern(k) if isinstance(k, str) else k): shared_strings(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [shared_strings(v) for v in value]
    return value


def validation_problems(
    exc: ValidationError, *, file: str, tool: str | None, prefix: str = ""
) -> list[LoadProblem]:
    """One :class:`LoadProblem` per pydantic error, with a dotted field path."""
    problems = []
    for err in exc.errors(include_url=False):
        path = ".".join(str(p) for p in err["loc"])
        where = f"{prefix}{path}" if path else prefix.rstrip(".") or "(document)"
        problems.append(LoadProblem(file=file, tool=tool, field=where, message=err["msg"]))
    return problems


def load_file(path: Path, *, display_root: Path | None = None) -> LoadResult:
    """Load every tool in one file; problems are collected, never raised."""
    shown = str(path.relative_to(display_root)) if display_root else str(path)
    result = LoadResult()
    try:
        data = shared_strings(parse_document(path.read_text(encoding="utf-8"), path.suffix.lower()))
    except (OSError, UnicodeDecodeError) as exc:
        result.problems.append(LoadProblem(file=shown, field="(file)", message=str(exc)))
        return result
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        result.problems.append(LoadProblem(file=shown, field="(syntax)", message=_syntax(exc)))
        return result
    except TooDeep as exc:
        result.problems.append(LoadProblem(file=shown, field="(document)", message=str(exc)))
        return result
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items):
        prefix = f"[{index}]." if isinstance(data, list) else ""
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(item, dict):
            result.problems.append(
                LoadProblem(
                    file=shown,
                    field=prefix.rstrip(".") or "(document)",
                    message="a tool must be a mapping",
                )
            )
            continue
        try:
            result.tools.append(LoadedTool(ToolConfig.model_validate(item), path))
        except ValidationError as exc:
            tool_name = name if isinstance(name, str) else None
            result.problems.extend(
                validation_problems(exc, file=shown, tool=tool_name, prefix=prefix)
            )
    return result


def load_directory(directory: Path) -> LoadResult:
    """Load every tool file in ``directory`` (sorted by name; later duplicates are refused)."""
    result = LoadResult()
    if not directory.is_dir():
        return result
    seen: dict[str, Path] = {}
    for path in sorted(p for p in directory.iterdir() if p.suffix.lower() in TOOL_FILE_SUFFIXES):
        if path.name.startswith("."):
            continue
        loaded = load_file(path, display_root=directory)
        result.problems.extend(loaded.problems)
        for tool in loaded.tools:
            first = seen.get(tool.config.name)
            if first is not None:
                result.problems.append(
                    LoadProblem(
                        file=path.name,
                        tool=tool.config.name,
                        field="name",
                        message=f"duplicate tool name; already defined in {first.name}",
                    )
                )
                continue
            seen[tool.config.name] = path
            result.tools.append(tool)
    return result


def _syntax(exc: Exception) -> str:
    where = where_in_text(exc)
    if where is not None:
        return where
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    return str(exc)
