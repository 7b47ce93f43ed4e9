"""The node-kind reference (docs/node-kinds.md), generated from the node models.

Each kind's fields come from its pydantic model (name as written, type, default, whether it
is required), so the reference cannot drift from what the loader accepts: a test regenerates
it and compares (``make docs`` writes it).
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from dynamic_tools.engine.models import BranchCase, OnError, ParamSpec, ToolStep
from dynamic_tools.engine.nodes import KINDS as NODE_KINDS
from dynamic_tools.engine.nodes.kind import Kind
from dynamic_tools.engine.nodes.pause import AnswerSpec, Choices

__all__ = ["KINDS", "node_kind_reference"]

KINDS: list[tuple[str, type[BaseModel], str]] = [
    (kind.name, kind.model, kind.written_as) for kind in NODE_KINDS
]
PARTS: list[tuple[str, type[BaseModel]]] = [
    ("on_error (calls and sub-workflows)", OnError),
    ("a case of a branch's `on`", BranchCase),
    ("a step of a compensate node, or `compensate_with`", ToolStep),
    ("a workflow param", ParamSpec),
    ("a field of a yield's `expects` (a param, with optional `choices`)", AnswerSpec),
    ("the `choices` of a yield's field", Choices),
]


def node_kind_reference(kinds: Sequence[Kind[Any]] = NODE_KINDS) -> str:
    """The markdown of docs/node-kinds.md (of ``kinds``: the registry's by default)."""
    lines = [
        "# Node kinds",
        "",
        "Generated from the node kinds (`backend/src/dynamic_tools/engine/nodes/`, one module",
        "each) by `make docs`; a test fails when this file is stale. How nodes are scheduled,",
        "retried and undone is in the workflow format reference",
        "(`backend/src/dynamic_tools/docs/workflow-spec.md`, also served as the MCP resource",
        "`workflow.spec`).",
        "",
        "Every node also takes `depends_on` (node ids), `description` and `timeout` (`30s`,",
        "`2m`, or milliseconds).",
        "",
    ]
    for kind in kinds:
        module = kind.model.__module__.rsplit(".", 1)[-1]
        lines += [f"## {kind.name}", "", _summary(kind.model), ""]
        lines += [f"Written as `{kind.written_as}`.", ""]
        lines += [f"Defined in `engine/nodes/{module}.py`.", ""]
        lines += _fields(kind.model, skip={"kind", "depends_on", "description", "timeout"})
    lines += ["## Parts of nodes", ""]
    for title, part in PARTS:
        lines += [f"### {title}", "", _summary(part), ""]
        lines += _fields(part, skip=set())
    return "\n".join(lines).rstrip() + "\n"


def _summary(model: type[BaseModel]) -> str:
    doc = inspect.getdoc(model) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _fields(model: type[BaseModel], *, skip: set[str]) -> list[str]:
    rows = ["| field | type | required / default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        meaning = " ".join((field.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{field.alias or name}` | {_type(field)} | {_default(field)} | {meaning} |")
    return [*rows, ""]


def _type(field: FieldInfo) -> str:
    return _annotation(field.annotation).replace("|", "\\|")


def _annotation(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _annotation(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_annotation(a) for a in args)
    if origin is typing.Literal:
        return " or ".join(repr(a) for a in args)
    if origin in (list, dict):
        inner = ", ".join(_annotation(a) for a in args)
        return f"{origin.__name__}[{inner}]"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    name = getattr(annotation, "__name__", str(annotation))
    return re.sub(r"^typing\.", "", name)


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return f"default `{field.default_factory()!r}`"  # type: ignore[call-arg]
    if field.default is PydanticUndefined or field.default is None:
        return "optional"
    return f"default `{field.default!r}`"
