"""Checking run parameters (and yield answers) against their declared specs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from jsonschema import FormatChecker
from jsonschema.exceptions import FormatError

from dynamic_tools.engine.node_parts import ParamSpec
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, find_too_deep, shorten

JSON_TYPES = {
    "str": "string",
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "dict": "object",
    "object": "object",
}
"""The JSON Schema type of each param type (``any`` has none)."""

_CHECKS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "str": (str, "a string"),
    "string": (str, "a string"),
    "int": (int, "an integer"),
    "integer": (int, "an integer"),
    "float": ((int, float), "a number"),
    "number": ((int, float), "a number"),
    "bool": (bool, "a boolean"),
    "boolean": (bool, "a boolean"),
    "list": (list, "a list"),
    "array": (list, "a list"),
    "dict": (dict, "an object"),
    "object": (dict, "an object"),
}


def check_values(
    specs: Mapping[str, ParamSpec], values: Mapping[str, Any], *, what: str = "params"
) -> dict[str, Any]:
    """Values with defaults applied; :class:`InvalidInputError` names every bad field.

    Unknown names, missing required values (a required param's default is only a suggestion),
    values nested past :data:`~dynamic_tools.safe_parsing.MAX_VALUE_DEPTH` levels, wrong types,
    values outside ``enum`` and strings not of their ``format`` (``date`` is YYYY-MM-DD) are
    each one violation with ``path`` ``<what>.<name>``.
    """
    violations: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    for name in values:
        if name not in specs:
            violations.append(
                {
                    "path": f"{what}.{name}",
                    "rule": "unknown",
                    "message": f"'{name}' is not declared; expected one of "
                    + (", ".join(sorted(specs)) or "(none)"),
                    "actual": name,
                }
            )
    for name, spec in specs.items():
        if name not in values or values[name] is None:
            if spec.required:  # a default of a required param is only a suggestion
                violations.append(
                    {
                        "path": f"{what}.{name}",
                        "rule": "required",
                        "message": f"'{name}' is required",
                        "expected": spec.type,
                    }
                )
            else:  # an optional param not given is its default, or null
                result[name] = spec.default
            continue
        value = values[name]
        deep = find_too_deep(value, MAX_VALUE_DEPTH)
        if deep is not None:  # the value is not echoed: rendering it would recurse as deep
            violations.append(
                {
                    "path": f"{what}.{name}",
                    "rule": "max_depth",
                    "message": f"too deep: nested past {MAX_VALUE_DEPTH} levels"
                    + (f" at {shorten('.'.join(map(str, deep)))}" if deep else ""),
                    "expected": MAX_VALUE_DEPTH,
                }
            )
            continue
        rule, problem = _type_problem(spec, value)
        if problem:
            violations.append(
                {
                    "path": f"{what}.{name}",
                    "rule": rule,
                    "message": problem,
                    "expected": spec.type,
                    "actual": value,
                }
            )
            continue
        result[name] = value
    if violations:
        names = ", ".join(v["path"] for v in violations)
        raise InvalidInputError(f"invalid {what}: {names}", violations=violations)
    return result


def _type_problem(spec: ParamSpec, value: Any) -> tuple[str, str | None]:
    """The rule ``value`` breaks (type, enum, format) and why; ``(…, None)`` when it fits."""
    check = _CHECKS.get(spec.type)
    if check is not None:
        kinds, label = check
        is_bool = isinstance(value, bool)
        if not isinstance(value, kinds) or (is_bool and spec.type not in ("bool", "boolean")):
            return "type", f"expected {label}, got {type(value).__name__}"
    if spec.enum is not None and value not in spec.enum:
        return "enum", f"must be one of {_listing(spec.enum)}"
    if spec.format is not None and isinstance(value, str):
        return "format", format_problem(value, spec.format)
    return "type", None


def _listing(values: list[Any], shown: int = 10) -> str:
    """``[a, b, c]``, or the first ``shown`` and how many more."""
    if len(values) <= shown:
        return str(values)
    return f"{values[:shown]} (and {len(values) - shown} more)"


FORMATS = FormatChecker()
"""The formats params and literal call arguments are checked with (date-time added)."""


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    """RFC 3339: a date, ``T``, a time and an offset (or ``Z``)."""
    if not isinstance(value, str):
        return True
    if "T" not in value.upper() or not re.search(r"(Z|[+-]\d{2}:\d{2})$", value, re.I):
        return False
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


def format_problem(value: str, fmt: str) -> str | None:
    """Why ``value`` is not a ``fmt`` string, or None.

    Checked: date, date-time, time, email, uuid, ipv4, ipv6 …; a format nobody checks passes.
    """
    try:
        FORMATS.check(value, fmt)
    except FormatError:
        return f"'{value[:60]}' is not a valid {fmt}" + (" (YYYY-MM-DD)" if fmt == "date" else "")
    return None


SHOWN_ONLY = frozenset({"options"})
"""Keys a paused yield's ``expects`` shows that are not part of a spec."""


def answer_specs(expects: Mapping[str, Any]) -> dict[str, ParamSpec]:
    """The specs of the fields a paused yield shows (its ``options`` are in its ``enum``)."""
    return {
        name: ParamSpec.model_validate({k: v for k, v in shown.items() if k not in SHOWN_ONLY})
        for name, shown in expects.items()
    }


def param_schema(spec: ParamSpec) -> dict[str, Any]:
    """The JSON Schema of one parameter: type, format, description, enum, default, examples."""
    schema: dict[str, Any] = {}
    if spec.type in JSON_TYPES:
        schema["type"] = JSON_TYPES[spec.type]
    for key in ("format", "description", "enum", "default"):
        value = getattr(spec, key)
        if value is not None:
            schema[key] = value
    if spec.example is not None:
        schema["examples"] = [spec.example]
    return schema


def params_schema(params: Mapping[str, ParamSpec]) -> dict[str, Any]:
    """The JSON Schema of a workflow's params: an object, the required ones listed, no others."""
    return {
        "type": "object",
        "properties": {name: param_schema(spec) for name, spec in params.items()},
        "required": [name for name, spec in params.items() if spec.required],
        "additionalProperties": False,
    }


__all__ = [
    "FORMATS",
    "JSON_TYPES",
    "SHOWN_ONLY",
    "answer_specs",
    "check_values",
    "format_problem",
    "param_schema",
    "params_schema",
]
