"""The parts every node kind is made of: parameters, retry policy, tool steps, the node base.

Node kinds themselves live in :mod:`dynamic_tools.engine.nodes` (one module each); the
document models (:class:`~dynamic_tools.engine.models.Workflow`,
:class:`~dynamic_tools.engine.models.WorkflowDocument`) in :mod:`dynamic_tools.engine.models`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, ConfigDict, Field, field_validator

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import Sparse

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}

RETRY_CONDITIONS = ("transport", "timeout", "4xx", "5xx", "429", "criteria")

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


def parse_duration(value: float | int | str | None) -> float | None:
    """Seconds from a number (seconds) or a string such as ``500ms``, ``30s``, ``5m``, ``2h``."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"'{value}' is not a duration; use seconds or e.g. 500ms, 30s, 5m, 2h")
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)]


class FrozenModel(LazyModel):
    """Frozen, no unknown fields, fields settable by alias or name."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ParamSpec(FrozenModel):
    """One workflow parameter (the seeds' short type names are accepted)."""

    type: ParamType = "any"
    required: bool = False
    default: Any = None
    description: str | None = None
    format: str | None = None
    example: Any = None
    enum: list[Any] | None = None


class ChoiceOption(Sparse):
    """One option a yield offers: the answer, what people read, and the element it came from."""

    SPARSE: ClassVar[frozenset[str]] = frozenset({"item"})

    value: str | int | float | bool | None = Field(description="The answer it stands for")
    label: str = Field(description="What the user reads")
    item: dict[str, Any] | None = Field(
        default=None, description="The element of the list it came from (an object's)"
    )


class ParamView(Sparse):
    """A :class:`ParamSpec` as shown: its keys that are set (a yield's field with its options).

    A workflow's params (``WorkflowSummary.params``) and a waiting yield's ``expects`` have
    this shape; ``options`` (and the ``enum`` of their values) only for a field whose
    ``choices`` the run has rendered.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"default", "description", "format", "example", "enum", "options"}
    )

    type: str = Field(default="any", description="A type name (str, integer, list...)")
    required: bool = False
    default: Any = None
    description: str | None = None
    format: str | None = None
    example: Any = None
    enum: list[Any] | None = None
    options: list[ChoiceOption] | None = Field(
        default=None, description="A waiting yield's options to pick from"
    )


Timeout = Annotated[float | None, Field(default=None, gt=0)]


class Timed(FrozenModel):
    """A model with an optional ``timeout`` (seconds, or a duration such as ``30s``)."""

    timeout: Timeout = None

    @field_validator("timeout", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return parse_duration(value) if isinstance(value, str) else value


class OnError(FrozenModel):
    """Retry policy of a call. ``retry: N`` means up to N further attempts."""

    retry: int = Field(default=0, ge=0, le=20)
    delay: int = Field(default=0, ge=0, description="Milliseconds before the first retry.")
    backoff: Literal["constant", "linear", "exponential"] = "constant"
    max_delay: int | None = Field(default=None, ge=0, description="Cap on one delay (ms).")
    jitter: bool | float = False
    retry_on: list[str] = Field(
        default_factory=lambda: ["transport", "5xx", "429"],
        description="transport, timeout, 4xx, 5xx, 429, criteria (the success criteria were "
        "not met) or a status code such as '503'.",
    )
    retry_if: str | None = Field(
        default=None,
        description="Retry only when this also holds (an expression over $result, $status, "
        "$headers).",
    )
    fallback: str | None = None

    @field_validator("retry_on")
    @classmethod
    def _known_conditions(cls, value: list[str]) -> list[str]:
        for item in value:
            text = str(item)
            if text not in RETRY_CONDITIONS and not (text.isdigit() and 100 <= int(text) <= 599):
                raise ValueError(
                    f"'{text}' is not transport, timeout, 4xx, 5xx, 429, criteria or a status"
                )
        return [str(v) for v in value]


class ToolStep(FrozenModel):
    """A call inside a compensate node or a ``compensate_with``."""

    call: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    ignore_error: bool = False


def check_output_names(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """``value`` when each of its names is an identifier (a node's named ``outputs``)."""
    for name in value or {}:
        if not re.match(IDENTIFIER, name):
            raise ValueError(f"output name '{name}' must match {IDENTIFIER}")
    return value


NamedOutputs = Annotated[dict[str, Any] | None, AfterValidator(check_output_names)]
"""Named values a node takes from its answer (each name an identifier)."""


class NodeBase(Timed):
    """What every node has: its kind, ``depends_on``, ``description`` and ``timeout``.

    Each kind narrows ``kind`` to its own name (a literal), which tells the kinds apart.
    """

    kind: str = Field(alias="type")
    depends_on: list[str] = Field(default_factory=list)
    description: str | None = None

    @field_validator("depends_on", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


def with_kind(value: Any, shorthands: dict[str, str]) -> Any:
    """Fill ``type`` from a node's shape when it is missing (``call: x`` → ``type: call``).

    ``shorthands`` maps a field that implies a kind to that kind's name.
    """
    if isinstance(value, dict) and "type" not in value:
        for field_name, kind in shorthands.items():
            if field_name in value:
                return {**value, "type": kind}
    return value


__all__ = [
    "IDENTIFIER",
    "ChoiceOption",
    "FrozenModel",
    "NamedOutputs",
    "NodeBase",
    "OnError",
    "ParamSpec",
    "ParamType",
    "ParamView",
    "Timed",
    "Timeout",
    "ToolStep",
    "check_output_names",
    "parse_duration",
    "with_kind",
]
