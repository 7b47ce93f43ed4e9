"""Workflow documents: the model every format (YAML, JSON, XML) loads into.

A document (seeds 000/001) has a ``domain``, a ``version`` and ``workflows``; each workflow
has ``params``, a ``graph`` of named nodes and optional ``outputs`` and ``timeout``. A node's
kind is its ``type`` field, or ``call`` when it has ``call``, or ``workflow`` when it has
``workflow``. Models are frozen: a run interprets a document, it never changes it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}

ParamType = Literal[
    "str",
    "string",
    "int",
    "integer",
    "float",
    "number",
    "bool",
    "boolean",
    "list",
    "array",
    "dict",
    "object",
    "any",
]
NodeKind = Literal[
    "call",
    "branch",
    "parallel",
    "foreach",
    "workflow",
    "yield",
    "compensate",
    "error",
]


def parse_duration(value: float | int | str | None) -> float | None:
    """Seconds from a number (seconds) or a string such as ``500ms``, ``30s``, ``5m``, ``2h``."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"'{value}' is not a duration; use seconds or e.g. 500ms, 30s, 5m, 2h")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ParamSpec(_Model):
    """One workflow parameter (the seeds' short type names are accepted)."""

    type: ParamType = "any"
    required: bool = False
    default: Any = None
    description: str | None = None
    format: str | None = None
    example: Any = None
    enum: list[Any] | None = None


Timeout = Annotated[float | None, Field(default=None, gt=0)]


class _Timed(_Model):
    timeout: Timeout = None

    @field_validator("timeout", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return parse_duration(value) if isinstance(value, str) else value


class OnError(_Model):
    """Retry policy of a call. ``retry: N`` means up to N further attempts."""

    retry: int = Field(default=0, ge=0, le=20)
    delay: int = Field(default=0, ge=0, description="Milliseconds before the first retry.")
    backoff: Literal["constant", "linear", "exponential"] = "constant"
    max_delay: int | None = Field(default=None, ge=0, description="Cap on one delay (ms).")
    jitter: bool | float = False
    retry_on: list[str] = Field(
        default_factory=lambda: ["transport", "5xx", "429"],
        description="transport, timeout, 4xx, 5xx, 429 or a status code such as '503'.",
    )
    fallback: str | None = None

    @field_validator("retry_on")
    @classmethod
    def _known_conditions(cls, value: list[str]) -> list[str]:
        for item in value:
            text = str(item)
            if text not in ("transport", "timeout", "4xx", "5xx", "429") and not (
                text.isdigit() and 100 <= int(text) <= 599
            ):
                raise ValueError(f"'{text}' is not transport, timeout, 4xx, 5xx, 429 or a status")
        return [str(v) for v in value]


class ToolStep(_Model):
    """A call inside a compensate node or a ``compensate_with``."""

    call: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    ignore_error: bool = False


class _NodeBase(_Timed):
    depends_on: list[str] = Field(default_factory=list)
    description: str | None = None

    @field_validator("depends_on", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class CallNode(_NodeBase):
    """Call a tool (a registered tool, ``rest_call`` or ``sql_query``)."""

    kind: Literal["call"] = Field(default="call", alias="type")
    call: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    output: str | None = Field(default=None, pattern=IDENTIFIER)
    on_error: OnError | None = None
    compensate_with: ToolStep | None = None
    success: str | None = Field(default=None, description="Expression over $result.")


class WorkflowNode(_NodeBase):
    """Run another workflow of the document; its result becomes this node's output."""

    kind: Literal["workflow"] = Field(default="workflow", alias="type")
    workflow: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    output: str | None = Field(default=None, pattern=IDENTIFIER)
    on_error: OnError | None = None


StepNode = Annotated[CallNode | WorkflowNode, Field(discriminator="kind")]


class BranchCase(_Model):
    """``when`` → ``goto``; a case without ``when`` is the default."""

    when: str | None = None
    goto: str = Field(min_length=1)
    default: Any = Field(
        default=None,
        description="Seed syntax: a list item `- default:` with `goto:` marks the default case.",
    )


class BranchNode(_NodeBase):
    """Activate the target of the first case whose condition holds (or the default)."""

    kind: Literal["branch"] = Field(alias="type")
    on: list[BranchCase] = Field(min_length=1)
    default: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _seed_default_syntax(cls, data: Any) -> Any:
        # Seeds write the default as a list item `- default:` followed by `goto: x`, which
        # YAML reads as {"default": None, "goto": "x"}; also accept `default: {goto: x}`.
        if not isinstance(data, dict) or not isinstance(data.get("on"), list):
            return data
        cases, default = [], data.get("default")
        if isinstance(default, dict):
            default = default.get("goto")
        for case in data["on"]:
            if isinstance(case, dict) and "default" in case and "when" not in case:
                inner = case.get("default")
                target = inner.get("goto") if isinstance(inner, dict) else case.get("goto")
                if default is not None and target is not None:
                    raise ValueError("a branch has more than one default")
                default = target
                continue
            cases.append(case)
        return {**data, "on": cases or data["on"], "default": default}


class ParallelNode(_NodeBase):
    """Run branches at once; each branch is a call or a sub-workflow."""

    kind: Literal["parallel"] = Field(alias="type")
    branches: dict[str, StepNode] = Field(min_length=1)
    on_partial_failure: str = "abort"
    concurrency: int | None = Field(default=None, ge=1, le=256)

    @field_validator("branches", mode="before")
    @classmethod
    def _list_form(cls, value: Any) -> Any:
        if isinstance(value, list):  # seed 000 writes branches as a list of nodes with ids
            out: dict[str, Any] = {}
            for index, item in enumerate(value):
                if not isinstance(item, dict) or "id" not in item:
                    raise ValueError(f"branch {index} needs an 'id' when branches is a list")
                out[str(item["id"])] = {k: v for k, v in item.items() if k != "id"}
            value = out
        if isinstance(value, dict):
            return {k: _with_kind(v) for k, v in value.items()}
        return value


class ForeachNode(_NodeBase):
    """Run ``step`` once per item; the output is the list of results in item order."""

    kind: Literal["foreach"] = Field(alias="type")
    items: Any
    as_: str = Field(default="item", alias="as", pattern=IDENTIFIER)
    step: StepNode
    output: str | None = Field(default=None, pattern=IDENTIFIER)
    max_iterations: int | None = Field(default=None, ge=1, le=10_000)
    concurrency: int | None = Field(default=None, ge=1, le=256)

    @field_validator("step", mode="before")
    @classmethod
    def _infer_kind(cls, value: Any) -> Any:
        return _with_kind(value)


class YieldNode(_NodeBase):
    """Pause the run with a message until values matching ``expects`` are given."""

    kind: Literal["yield"] = Field(alias="type")
    message: str = ""
    expects: dict[str, ParamSpec] = Field(default_factory=dict)

    @field_validator("expects", mode="before")
    @classmethod
    def _short_types(cls, value: Any) -> Any:
        if isinstance(value, dict):  # seeds write `expects: {selected_flight_id: str}`
            return {
                k: ({"type": v, "required": True} if isinstance(v, str) else v)
                for k, v in value.items()
            }
        return value


class CompensateNode(_NodeBase):
    """Undo steps, run only when activated (abort of a parallel, a fallback, a goto)."""

    kind: Literal["compensate"] = Field(alias="type")
    steps: list[ToolStep] = Field(min_length=1)
    ignore_error: bool = False


class ErrorNode(_NodeBase):
    """Fail the run with an interpolated message."""

    kind: Literal["error"] = Field(alias="type")
    message: str = "workflow failed"


Node = Annotated[
    CallNode
    | WorkflowNode
    | BranchNode
    | ParallelNode
    | ForeachNode
    | YieldNode
    | CompensateNode
    | ErrorNode,
    Field(discriminator="kind"),
]


def _with_kind(value: Any) -> Any:
    """Fill ``type`` from the node's shape (``call`` or ``workflow``) when it is missing."""
    if isinstance(value, dict) and "type" not in value:
        if "call" in value:
            return {**value, "type": "call"}
        if "workflow" in value:
            return {**value, "type": "workflow"}
    return value


class Workflow(_Timed):
    """One workflow: parameters, a graph of named nodes, optional outputs."""

    description: str = ""
    params: dict[str, ParamSpec] = Field(default_factory=dict)
    graph: dict[str, Node] = Field(min_length=1)
    outputs: dict[str, Any] | None = None

    @field_validator("graph", mode="before")
    @classmethod
    def _infer_kinds(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _with_kind(v) for k, v in value.items()}
        return value

    @field_validator("graph")
    @classmethod
    def _node_ids(cls, value: dict[str, Any]) -> dict[str, Any]:
        for node_id in value:
            if not re.match(IDENTIFIER, node_id):
                raise ValueError(f"node id '{node_id}' must match {IDENTIFIER}")
        return value

    @field_validator("params")
    @classmethod
    def _param_names(cls, value: dict[str, ParamSpec]) -> dict[str, ParamSpec]:
        for name in value:
            if not re.match(IDENTIFIER, name):
                raise ValueError(f"parameter name '{name}' must match {IDENTIFIER}")
        return value


class WorkflowDocument(_Model):
    """A file of workflows for one domain."""

    domain: str = Field(default="default", min_length=1)
    version: str = "1.0"
    description: str | None = None
    base_url: str | None = Field(
        default=None,
        description="Base URL for the built-in rest_call (its args give method and path).",
        pattern=r"^https?://[^\s]+$",
    )
    workflows: dict[str, Workflow] = Field(min_length=1)

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("workflows")
    @classmethod
    def _workflow_ids(cls, value: dict[str, Workflow]) -> dict[str, Workflow]:
        for workflow_id in value:
            if not re.match(IDENTIFIER, workflow_id):
                raise ValueError(f"workflow id '{workflow_id}' must match {IDENTIFIER}")
        return value


__all__ = [
    "IDENTIFIER",
    "BranchCase",
    "BranchNode",
    "CallNode",
    "CompensateNode",
    "ErrorNode",
    "ForeachNode",
    "Node",
    "NodeKind",
    "OnError",
    "ParallelNode",
    "ParamSpec",
    "ParamType",
    "StepNode",
    "Timeout",
    "ToolStep",
    "Workflow",
    "WorkflowDocument",
    "WorkflowNode",
    "YieldNode",
    "parse_duration",
]
