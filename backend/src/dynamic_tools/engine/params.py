"""Checking run parameters (and yield answers) against their declared specs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamic_tools.engine.node_parts import ParamSpec
from dynamic_tools.errors import InvalidInputError

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

    Unknown names, missing required values, wrong types and values outside ``enum`` are each
    one violation with ``path`` ``<what>.<name>``.
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
            if spec.required and spec.default is None:
                violations.append(
                    {
                        "path": f"{what}.{name}",
                        "rule": "required",
                        "message": f"'{name}' is required",
                        "expected": spec.type,
                    }
                )
            elif spec.default is not None:
                result[name] = spec.default
            continue
        value = values[name]
        problem = _type_problem(spec, value)
        if problem:
            violations.append(
                {
                    "path": f"{what}.{name}",
                    "rule": "type",
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


def _type_problem(spec: ParamSpec, value: Any) -> str | None:
    check = _CHECKS.get(spec.type)
    if check is not None:
        kinds, label = check
        is_bool = isinstance(value, bool)
        if not isinstance(value, kinds) or (is_bool and spec.type not in ("bool", "boolean")):
            return f"expected {label}, got {type(value).__name__}"
    if spec.enum is not None and value not in spec.enum:
        return f"must be one of {spec.enum}"
    return None


__all__ = [
    "check_values",
]
