"""Checking a call's ``args`` against the called tool's input schema, before any run.

What can be known when a document is saved is checked: every name the schema requires is
given, no name is given that it does not declare (when it allows no others), and each value
whose type is known fits its property's schema — a literal value (types, formats, enums,
ranges, all of JSON Schema), a reference to a typed parameter (``$passengers`` of
``type: int`` where the tool wants a string), a string with references in it (always a string).
References to outputs are left to the run: their values are unknown until then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from dynamic_tools.engine.node_parts import ParamSpec
from dynamic_tools.engine.params import FORMATS, JSON_TYPES
from dynamic_tools.engine.references import REFERENCE_PATTERN, find_references, render

__all__ = ["ArgumentProblem", "argument_problems"]


@dataclass(frozen=True)
class ArgumentProblem:
    """One problem: the argument (None: the args as a whole), its rule and message."""

    argument: str | None
    rule: str
    message: str
    expected: Any = None
    actual: Any = None


def argument_problems(
    tool: str, schema: Mapping[str, Any], args: Mapping[str, Any], params: Mapping[str, ParamSpec]
) -> list[ArgumentProblem]:
    """What is wrong with ``args`` for ``tool`` (whose input schema is ``schema``)."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    problems: list[ArgumentProblem] = []
    for name in schema.get("required") or []:
        if name not in args:
            problems.append(
                ArgumentProblem(
                    None,
                    "missing_argument",
                    f"{tool} needs argument '{name}'",
                    expected=name,
                )
            )
    closed = schema.get("additionalProperties") is False
    for name, value in args.items():
        prop = properties.get(name)
        if prop is None:
            if closed:
                problems.append(
                    ArgumentProblem(
                        name,
                        "unknown_argument",
                        f"{tool} has no argument '{name}'",
                        expected=sorted(properties),
                        actual=name,
                    )
                )
            continue
        problem = _value_problem(tool, name, prop, value, params)
        if problem is not None:
            problems.append(problem)
    return problems


def _value_problem(
    tool: str, name: str, prop: Mapping[str, Any], value: Any, params: Mapping[str, ParamSpec]
) -> ArgumentProblem | None:
    wanted = _types(prop)
    if isinstance(value, str) and find_references(value):
        whole = REFERENCE_PATTERN.fullmatch(value)
        if whole is None:  # text with references in it: a string once rendered
            given = "string"
        elif not whole.group(2) and whole.group(1) in params:
            given = JSON_TYPES.get(params[whole.group(1)].type, "")
        else:
            return None  # an output, a path into something: known only when the run gets there
        if given and wanted and not _fits(given, wanted):
            return ArgumentProblem(
                name,
                "argument_type",
                f"{tool}.{name} takes {' or '.join(sorted(wanted))}, but {value} is {given}",
                expected=sorted(wanted),
                actual=value,
            )
        return None
    if _has_reference(value):
        return None
    literal = render(value, _no_lookup, node_id=None)  # $$ → $
    try:
        validator = Draft202012Validator(dict(prop), format_checker=FORMATS)
        error = next(iter(validator.iter_errors(literal)), None)
    except SchemaError:
        return None  # the tool's own schema is broken: the registry reports it
    if error is None:
        return None
    return ArgumentProblem(
        name,
        "argument_value",
        f"{tool}.{name}: {error.message}",
        expected={k: prop[k] for k in ("type", "format", "enum") if k in prop} or None,
        actual=literal,
    )


def _types(prop: Mapping[str, Any]) -> set[str]:
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _fits(given: str, wanted: set[str]) -> bool:
    return given in wanted or (given == "integer" and "number" in wanted)


def _has_reference(value: Any) -> bool:
    if isinstance(value, str):
        return bool(find_references(value))
    if isinstance(value, Mapping):
        return any(_has_reference(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_reference(v) for v in value)
    return False


def _no_lookup(name: str) -> Any:  # pragma: no cover - only called for values with no reference
    raise KeyError(name)
