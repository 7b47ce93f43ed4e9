"""The parts the Arazzo converter's modules share: problems, the result, names, helpers."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.tools.models import ToolConfig

Path_ = tuple[str | int, ...]
_ID = re.compile(r"[^A-Za-z0-9_]")
MAX_RETRY_LIMIT = 20
MAX_LOOPS = 100
"""How many times a goto back to an earlier step may be taken (Arazzo sets no bound)."""


@dataclass
class Problem:
    """One problem of the conversion, at a path of the Arazzo document."""

    path: Path_
    rule: str
    message: str
    severity: str = "error"


@dataclass
class ArazzoConversion:
    """Tools, a workflow document (as data) and what the conversion found."""

    tools: list[ToolConfig] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)
    workflow_ids: dict[str, str] = field(default_factory=dict)
    """Arazzo workflow id → the id of its workflow here."""
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        """The problems that stop an import."""
        return [p for p in self.problems if p.severity == "error"]


def identifier(text: str, taken: set[str] | None = None) -> str:
    """``text`` as an engine identifier (``find-pet`` → ``find_pet``), unique among ``taken``."""
    name = _ID.sub("_", text)[:60] or "_"
    if name[0].isdigit():
        name = "_" + name
    if taken is not None:
        base, count = name, 2
        while name in taken:
            name = f"{base[:56]}_{count}"
            count += 1
        taken.add(name)
    return name


def resolved(value: Any, components: Mapping[str, Any]) -> Any:
    """A ``$ref: '#/components/...'`` replaced by what it names (once, no cycles)."""
    if isinstance(value, dict) and isinstance(value.get("$ref"), str):
        ref = value["$ref"]
        if ref.startswith("#/components/"):
            found: Any = components
            for part in ref[len("#/components/") :].split("/"):
                found = found.get(part) if isinstance(found, dict) else None
            return copy.deepcopy(found) if isinstance(found, dict) else {}
    return value


def input_names(schema: Any) -> list[str]:
    """The property names of a workflow's ``inputs`` schema."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    return [str(k) for k in props] if isinstance(props, dict) else []


def as_mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


__all__ = [
    "MAX_LOOPS",
    "MAX_RETRY_LIMIT",
    "ArazzoConversion",
    "Path_",
    "Problem",
    "as_list",
    "as_mapping",
    "identifier",
    "input_names",
    "resolved",
]
