"""ToolRegistry: the tools of the runtime registry directory, and writes back to it.

Rules:
- Tools load from ``<registry root>/tools/*.yaml|*.yml|*.json`` (one tool or a list per file),
  in file-name order; a duplicate name is refused with a problem naming both files.
- Lookups return the tool with ``${VAR}`` in ``api.base_url`` replaced by the settings'
  template variables; writes keep the file's own text (``${PUBLIC_BASE_URL}`` stays).
- Writes are atomic. A created tool goes to ``<name>.yaml``; an update or delete rewrites the
  file the tool came from, keeping the other entries of that file as they are.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dynamic_tools.atomic_files import remove_atomic, write_atomic
from dynamic_tools.errors import ConflictError, ConflictKind, NotFoundError, ToolConfigError
from dynamic_tools.tools.loader import LoadedTool, load_directory, parse_document
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.openapi.catalog_files import load_catalog_tools
from dynamic_tools.violations import LoadProblem


def dump_tool(config: ToolConfig) -> dict[str, Any]:
    """A tool as a plain mapping, in the file format (aliases, defaults left out)."""
    data = config.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["api"] = config.api.model_dump(mode="json")
    return data


class ToolRegistry:
    """The registered tools, loaded from a directory of tool config files."""

    def __init__(
        self,
        tools_dir: Path,
        *,
        variables: dict[str, str] | None = None,
        catalogs_dir: Path | None = None,
    ) -> None:
        """``catalogs_dir`` defaults to ``catalogs/`` beside ``tools_dir`` (the registry root's)."""
        self.tools_dir = tools_dir
        self.catalogs_dir = catalogs_dir or tools_dir.parent / "catalogs"
        self.variables = dict(variables or {})
        self._tools: dict[str, LoadedTool] = {}
        self._resolved: dict[str, ToolConfig] = {}
        self._problems: list[LoadProblem] = []
        self._lock = threading.RLock()
        self._schemas: tuple[int, dict[str, dict[str, Any]]] | None = None
        self.generation = 0  # bumped by every reload, so derived views know when to rebuild

    # --- loading ---------------------------------------------------------------------------
    def reload(self) -> list[LoadProblem]:
        """Read the directory again; returns the problems met (also kept in ``problems``).

        Tools of enabled OpenAPI catalogs (``tools/openapi/catalog_files.py``) load after
        ``tools/``; a catalog tool whose name is taken is refused with a problem naming both.
        """
        result = load_directory(self.tools_dir)
        taken = {loaded.config.name: loaded.file for loaded in result.tools}
        catalog = load_catalog_tools(self.catalogs_dir)
        result.problems.extend(catalog.problems)
        for loaded in catalog.tools:
            first = taken.get(loaded.config.name)
            if first is not None:
                result.problems.append(
                    LoadProblem(
                        file=f"catalogs/{loaded.file.name}",
                        tool=loaded.config.name,
                        field="name",
                        message=f"duplicate tool name; already defined in "
                        f"{first.parent.name}/{first.name}",
                    )
                )
                continue
            taken[loaded.config.name] = loaded.file
            result.tools.append(loaded)
        tools: dict[str, LoadedTool] = {}
        resolved: dict[str, ToolConfig] = {}
        problems = list(result.problems)
        for loaded in result.tools:
            unknown = [v for v in loaded.config.template_variables() if v not in self.variables]
            if unknown:
                problems.append(
                    LoadProblem(
                        file=loaded.file.name,
                        tool=loaded.config.name,
                        field="api.base_url",
                        message=f"unknown variable ${{{unknown[0]}}}; known: "
                        + ", ".join(sorted(self.variables)),
                    )
                )
                continue
            tools[loaded.config.name] = loaded
            resolved[loaded.config.name] = loaded.config.with_variables(self.variables)
        with self._lock:
            self._tools, self._resolved, self._problems = tools, resolved, problems
            self._schemas = None
            self.generation += 1
        return problems

    @property
    def problems(self) -> list[LoadProblem]:
        """Problems of the last load."""
        return list(self._problems)

    # --- lookups ---------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Names of every tool, sorted."""
        return sorted(self._resolved)

    def all(self) -> list[ToolConfig]:
        """Every tool, resolved, sorted by name."""
        return [self._resolved[n] for n in self.names()]

    def input_schemas(self) -> dict[str, dict[str, Any]]:
        """Each tool's input schema by name (what workflow validation checks call args with).

        The same object until the registry changes (built once per generation).
        """
        with self._lock:
            cached = self._schemas
            if cached is None or cached[0] != self.generation:
                built = {name: config.input_schema() for name, config in self._resolved.items()}
                cached = self._schemas = (self.generation, built)
        return cached[1]

    def __contains__(self, name: object) -> bool:
        return name in self._resolved

    def get(self, name: str) -> ToolConfig:
        """The tool called ``name``, resolved; :class:`NotFoundError` if none."""
        try:
            return self._resolved[name]
        except KeyError:
            raise NotFoundError(
                f"tool '{name}' is not registered", context={"tool": name}
            ) from None

    def find(self, name: str) -> ToolConfig | None:
        """The tool called ``name``, resolved, or None."""
        return self._resolved.get(name)

    def origin(self, name: str) -> Path | None:
        """The file tool ``name`` was loaded from (a tools file or a catalog manifest)."""
        loaded = self._tools.get(name)
        return loaded.file if loaded is not None else None

    def get_source(self, name: str) -> ToolConfig:
        """The tool as written in its file (``${VAR}`` not replaced)."""
        self.get(name)
        return self._tools[name].config

    def get_multiple(self, names: list[str]) -> tuple[list[ToolConfig], list[str]]:
        """``(found, missing)``: found tools in the order asked, and the unknown names."""
        return pick_tools(self._resolved, names)

    def by_name(self) -> dict[str, ToolConfig]:
        """Every tool, resolved, by name."""
        return dict(self._resolved)

    # --- writes ----------------------------------------------------------------------------
    def create(self, data: dict[str, Any]) -> ToolConfig:
        """Validate and write a new tool to ``<name>.yaml``; conflict if the name is taken."""
        config = self._validate(data)
        with self._lock:
            if config.name in self._tools:
                raise ConflictError(
                    f"tool '{config.name}' already exists",
                    kind=ConflictKind.EXISTS,
                    context={"tool": config.name},
                )
            path = self.tools_dir / f"{config.name}.yaml"
            if path.exists():
                raise ConflictError(
                    f"file '{path.name}' already exists in the tools directory",
                    kind=ConflictKind.EXISTS,
                    context={"tool": config.name, "file": path.name},
                )
            self._check_variables(config)
            write_atomic(path, yaml.safe_dump(dump_tool(config), sort_keys=False))
            self.reload()
        return self.get(config.name)

    def update(self, name: str, data: dict[str, Any]) -> ToolConfig:
        """Replace tool ``name`` in the file it came from; the name in ``data`` must match."""
        config = self._validate(data)
        if config.name != name:
            raise ToolConfigError(
                "the body's name differs from the tool being updated",
                violations=[
                    {"path": "name", "message": f"expected '{name}'", "actual": config.name}
                ],
            )
        with self._lock:
            self.get(name)
            self._check_variables(config)
            self._rewrite(name, dump_tool(config))
            self.reload()
        return self.get(name)

    def delete(self, name: str) -> None:
        """Remove tool ``name`` from its file (the file goes when it held only this tool)."""
        with self._lock:
            self.get(name)
            self._rewrite(name, None)
            self.reload()

    def _validate(self, data: dict[str, Any]) -> ToolConfig:
        try:
            return ToolConfig.model_validate(data)
        except ValidationError as exc:
            violations = [
                {
                    "path": ".".join(str(p) for p in e["loc"]) or "(body)",
                    "message": e["msg"],
                    "rule": e["type"],
                }
                for e in exc.errors(include_url=False)
            ]
            raise ToolConfigError("the tool config is invalid", violations=violations) from None

    def _check_variables(self, config: ToolConfig) -> None:
        unknown = [v for v in config.template_variables() if v not in self.variables]
        if unknown:
            raise ToolConfigError(
                "api.base_url uses an unknown variable",
                violations=[
                    {"path": "api.base_url", "message": f"unknown variable ${{{unknown[0]}}}"}
                ],
            )

    def _rewrite(self, name: str, replacement: dict[str, Any] | None) -> None:
        path = self._tools[name].file
        raw = parse_document(path.read_text(encoding="utf-8"), path.suffix.lower())
        if isinstance(raw, list):
            items = [
                replacement if isinstance(item, dict) and item.get("name") == name else item
                for item in raw
            ]
            items = [item for item in items if item is not None]
            if not items:
                remove_atomic(path)
                return
            write_atomic(path, _serialise(items, path.suffix.lower()))
        elif replacement is None:
            remove_atomic(path)
        else:
            write_atomic(path, _serialise(replacement, path.suffix.lower()))


def _serialise(data: Any, suffix: str) -> str:
    if suffix == ".json":
        import json

        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False)


def pick_tools(
    tools: Mapping[str, ToolConfig], names: list[str]
) -> tuple[list[ToolConfig], list[str]]:
    """``(found, missing)`` of ``names`` in ``tools`` (the pipeline's ``get_multiple``).

    Found ones in the order asked, each once, and the unknown names.
    """
    unique = list(dict.fromkeys(names))
    return [tools[n] for n in unique if n in tools], [n for n in unique if n not in tools]
