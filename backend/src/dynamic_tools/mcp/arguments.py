"""Every tool call's arguments are checked against the tool's inputSchema before anything runs.

One rule for every layer (API operations, ``_query``/``_execute``, recipes, the planner, ``w_*``
workflows, authoring, catalogs, markdown): a missing, unknown or mistyped argument answers
``INVALID_INPUT`` with one violation per problem, naming the argument, and nothing is called.
A tool may check more than its schema says (``ToolEntry.check``: a ``w_*`` tool checks its
params as a run would, date formats included); those violations come in the same answer, one
per argument the schema found nothing wrong with, so a call learns every problem at once.
Validators are compiled once per schema (schemas are cached with the session views, so the
same object comes back for every call of a tool).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from dynamic_tools.errors import InvalidInputError

_VALIDATORS: dict[int, tuple[dict[str, Any], Draft202012Validator]] = {}
_MAX_CACHED = 4096
_MAX_VIOLATIONS = 20


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    if len(_VALIDATORS) >= _MAX_CACHED:
        _VALIDATORS.clear()
    validator = Draft202012Validator(schema)
    _VALIDATORS[id(schema)] = (schema, validator)  # keeps the schema alive: ids stay unique
    return validator


def check_arguments(
    tool: types.Tool,
    arguments: Any,
    *,
    more: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """``arguments`` as a dict if they match ``tool``'s input schema; else InvalidInputError.

    ``more``: the tool's own checks (violations named by argument), reported with the schema's.
    """
    name = tool.name
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidInputError(
            f"the arguments of '{name}' must be an object",
            violations=[{"path": "(arguments)", "rule": "type", "message": "must be an object"}],
            context={"tool": name},
        )
    schema = tool.input_schema
    if not isinstance(schema, dict):
        schema = {}
    errors = sorted(_validator(schema).iter_errors(arguments), key=_order) if schema else []
    seen: set[tuple[str, str]] = set()
    violations = []
    for error in errors:  # one per argument and rule (``required`` reports each missing one)
        for violation in _violations(error):
            key = (violation["path"], violation["rule"])
            if key not in seen:
                seen.add(key)
                violations.append(violation)
    if more is not None:
        reported = {path for path, _ in seen}
        violations += [v for v in more(arguments) if v.get("path") not in reported]
    if not violations:
        return arguments
    violations = violations[:_MAX_VIOLATIONS]
    shown = "; ".join(f"{v['path']}: {v['message']}" for v in violations[:5])
    raise InvalidInputError(
        f"the arguments of '{name}' do not match its input schema: {shown}",
        violations=violations,
        context={"tool": name, "expected": _summary(schema)} if schema else {"tool": name},
    )


def _order(error: ValidationError) -> tuple[str, ...]:
    return tuple(str(p) for p in error.absolute_path)


def _violations(error: ValidationError) -> list[dict[str, Any]]:
    where = ".".join(str(p) for p in error.absolute_path)
    prefix = f"{where}." if where else ""
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "required":
        wanted = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [r for r in wanted if r not in instance]
        return [
            {"path": prefix + str(r), "rule": "required", "message": "is required but missing"}
            for r in missing
        ]
    if error.validator == "additionalProperties" and error.validator_value is False:
        allowed = set(schema.get("properties") or {})
        patterns = [re.compile(p) for p in schema.get("patternProperties") or {}]
        unknown = [
            k for k in instance if k not in allowed and not any(p.search(k) for p in patterns)
        ]
        hint = f"; known: {', '.join(sorted(allowed))}" if allowed else "; it takes none"
        return [
            {"path": prefix + str(k), "rule": "unknown", "message": "is not an argument" + hint}
            for k in unknown
        ]
    alternatives = error.validator_value if error.validator == "anyOf" else None
    if isinstance(alternatives, list) and all(
        isinstance(a, dict) and a.get("required") for a in alternatives
    ):
        names = [str(a["required"][0]) for a in alternatives]
        return [
            {
                "path": prefix + names[0],
                "rule": "one_of_required",
                "message": "one of these arguments is needed: " + ", ".join(names),
                "expected": names,
            }
        ]
    violation: dict[str, Any] = {
        "path": where or "(arguments)",
        "rule": str(error.validator),
        "message": error.message[:300],
    }
    if error.validator == "enum" and isinstance(error.validator_value, list):
        violation["expected"] = error.validator_value[:50]  # the choices
        violation["message"] = f"{error.instance!r:.80} is not one of the choices"
    elif error.validator in ("type", "format", "pattern", "minimum", "maximum", "const"):
        violation["expected"] = f"{error.validator} {error.validator_value!r:.120}"
    return [violation]


def _summary(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {
        "arguments": sorted(properties),
        "required": list(schema.get("required") or []),
    }


__all__ = ["check_arguments"]
