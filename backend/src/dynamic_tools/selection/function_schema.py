"""The schemas the LLM answers under: one function per candidate tool, plus "none suitable".

OpenAI's strict structured output needs every object closed (``additionalProperties: false``)
with every property required (an optional one becomes nullable), and no ``default``. A schema
that cannot meet this (an object not declared closed, ``patternProperties``, a ``$ref``) makes
that one tool non-strict; the answer is validated with jsonschema against the tool's own schema
either way, so strictness only helps the model, it is never trusted.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from dynamic_tools.tools.models import ToolConfig

NONE_SUITABLE = "none_suitable"

# Keywords strict mode rejects or ignores; dropped from the copy sent to the model only.
_STRICT_DROP = frozenset(
    {
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "contentEncoding",
        "contentMediaType",
        "format",
    }
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_UNSTRICTABLE = frozenset(
    {
        "patternProperties",
        "$ref",
        "$defs",
        "definitions",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "not",
        "unevaluatedProperties",
        "propertyNames",
    }
)


@dataclass(frozen=True)
class FunctionSpec:
    """One function offered to the LLM.

    ``parameters`` is the strict-mode schema when ``strict`` (every property required, optional
    ones nullable), else the tool's own; ``loose`` is the tool's own schema, sent where strict
    mode is not enforced (docs/llm-servers.md), so an optional parameter stays optional.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool
    loose: dict[str, Any] | None = None

    @property
    def loose_parameters(self) -> dict[str, Any]:
        """The schema to send when strict mode is off."""
        return self.loose if self.loose is not None else self.parameters

    def to_openai(self, *, strict: bool = True) -> dict[str, Any]:
        """The ``tools[]`` entry of a chat completion request (strict only when asked)."""
        strict = strict and self.strict
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters if strict else self.loose_parameters,
        }
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}


def function_for_tool(tool: ToolConfig) -> FunctionSpec:
    """The function for one tool: strict when its schema allows, plain otherwise."""
    schema = tool.input_schema()
    strict_schema = to_strict(schema)
    description = tool.description.strip()
    if tool.hints.hint:
        description += f" Hint: {tool.hints.hint}"
    if strict_schema is not None:
        return FunctionSpec(tool.name, description[:1024], strict_schema, strict=True, loose=schema)
    return FunctionSpec(tool.name, description[:1024], schema, strict=False)


def none_suitable_function() -> FunctionSpec:
    """The "none suitable" choice, so an irrelevant request is not forced onto a tool."""
    return FunctionSpec(
        NONE_SUITABLE,
        "Call this when no other function can do what the user asked. Explain why in 'reason'.",
        {
            "type": "object",
            "properties": {"reason": {"type": "string", "description": "Why no tool fits"}},
            "required": ["reason"],
            "additionalProperties": False,
        },
        strict=True,
    )


def to_strict(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A strict-mode copy of ``schema``, or None when strict mode cannot express it."""
    try:
        return _strict(copy.deepcopy(schema), required=True)
    except _NotStrictable:
        return None


class _NotStrictable(Exception):
    pass


def _strict(schema: Any, *, required: bool) -> dict[str, Any]:
    if not isinstance(schema, dict) or not schema:
        raise _NotStrictable
    if _UNSTRICTABLE & schema.keys():
        raise _NotStrictable
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if (key == "format" and value in _STRICT_FORMATS) or key not in _STRICT_DROP:
            out[key] = value
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in out:
            if combinator != "anyOf":
                raise _NotStrictable
            out["anyOf"] = [_strict(s, required=True) for s in out["anyOf"]]
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "object" in kinds:
        props = out.get("properties")
        if not isinstance(props, dict) or not props:
            raise _NotStrictable  # a free-form object
        if out.get("additionalProperties") is not False:
            # An open object accepts extra keys; strict mode would forbid them, so the model
            # could not send what the tool accepts.
            raise _NotStrictable
        originally_required = set(out.get("required", []))
        out["properties"] = {
            name: _strict(sub, required=name in originally_required) for name, sub in props.items()
        }
        out["required"] = list(props)
        out["additionalProperties"] = False
    if "array" in kinds:
        items = out.get("items")
        if not isinstance(items, dict):
            raise _NotStrictable
        out["items"] = _strict(items, required=True)
    if kind is None and "anyOf" not in out and "enum" not in out and "const" not in out:
        raise _NotStrictable  # "any" type
    if not required:
        out = _nullable(out)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null, as ``anyOf``: the form grammar converters keep whole.

    (``type: [T, "null"]`` loses ``enum``, ``pattern`` and ``format`` in llama.cpp's
    schema-to-grammar conversion; the ``anyOf`` form keeps them: docs/llm-servers.md.)
    """
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return schema
    if any(b.get("type") == "null" for b in schema.get("anyOf", []) if isinstance(b, dict)):
        return schema
    description = schema.get("description")
    inner = {k: v for k, v in schema.items() if k != "description"}
    out: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        out["description"] = description
    return out


def drop_nulls_for_optional(arguments: Any, schema: dict[str, Any]) -> Any:
    """Remove ``null`` values that strict mode used to mean "omitted" for optional properties.

    A null stays where the tool's own schema requires the property (validation then decides).
    """
    if not isinstance(arguments, dict) or not isinstance(schema, dict):
        return arguments
    props = schema.get("properties") or {}
    required = set(schema.get("required", []))
    cleaned: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None and name not in required:
            continue
        sub = props.get(name)
        if isinstance(sub, dict) and isinstance(value, dict):
            value = drop_nulls_for_optional(value, sub)
        elif (
            isinstance(sub, dict) and isinstance(value, list) and isinstance(sub.get("items"), dict)
        ):
            value = [drop_nulls_for_optional(v, sub["items"]) for v in value]
        cleaned[name] = value
    return cleaned
