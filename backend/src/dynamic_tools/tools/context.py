"""Tool context: tool configs written as API documentation for an LLM.

Design: docs/design-sources.md#single-shot-pipeline-design.

Auth parameters (and static body fields holding a secret) appear as ``[authenticated]``; no
secret value or reference is ever written.
"""

from __future__ import annotations

from typing import Any

from dynamic_tools.tools.models import ToolConfig

CONTEXT_HEADER = "Available Tools:\n\n"


def format_tools_as_context(tools: list[ToolConfig]) -> str:
    """All tools as one documentation block, in the order given."""
    return CONTEXT_HEADER + "\n\n".join(format_tool(t) for t in tools)


def format_tool(tool: ToolConfig, *, parameters: bool = True, output: bool = True) -> str:
    """One tool as documentation: endpoint, parameters by kind, static values, output.

    The endpoint is the method and path (the model never writes a URL: the base is not shown).
    ``parameters=False`` leaves the parameters out, for a model that reads them in the
    function definitions it is sent; ``output=False`` leaves the output out, for a model that
    makes one call and reads no answer (docs/performance.md, "Real models": what it saves).
    """
    lines = [
        f"Tool: {tool.name}",
        f"Description: {tool.description.strip()}",
        f"Endpoint: {tool.api.method} {tool.api.path}",
    ]
    required = [(n, p) for n, p in tool.parameters.items() if p.required]
    optional = [(n, p) for n, p in tool.parameters.items() if not p.required]
    if required and parameters:
        lines.append("Required Parameters:")
        lines += [f"  - {_describe(n, p.schema_, p.location)}" for n, p in required]
    if optional and parameters:
        lines.append("Optional Parameters:")
        lines += [f"  - {_describe(n, p.schema_, p.location)}" for n, p in optional]
    fixed = _fixed_values(tool)
    if fixed:
        lines.append("Fixed Values:")
        lines += [f"  - {where} {key}: {value}" for where, key, value in fixed]
    if tool.output_schema and output:
        lines.append("Expected Output:")
        lines += [f"  - {line}" for line in _output_lines(tool.output_schema)]
    hints = tool.hints
    if hints.hint:
        lines.append(f"Hint: {hints.hint}")
    return "\n".join(lines)


def _describe(name: str, schema: dict[str, Any], location: str) -> str:
    kind = _type_name(schema)
    text = f"{name} ({kind}, {location})"
    extras = []
    if "enum" in schema:
        extras.append("one of " + ", ".join(repr(v) for v in schema["enum"]))
    if "format" in schema:
        extras.append(f"format {schema['format']}")
    if "default" in schema:
        extras.append(f"default {schema['default']!r}")
    description = schema.get("description")
    if description:
        text += f": {str(description).strip()}"
    if extras:
        text += f" [{'; '.join(extras)}]"
    return text


def _type_name(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_name(schema['items'])}"
    return str(kind) if kind else "any"


def _fixed_values(tool: ToolConfig) -> list[tuple[str, str, str]]:
    fixed: list[tuple[str, str, str]] = []
    for key, value in tool.static_params.query.items():
        fixed.append(("query", key, str(value)))
    for key, value in tool.static_params.header.items():
        fixed.append(("header", key, str(value)))
    secret_body = tool.static_params.secret_body
    for key, value in tool.static_params.body.items():
        fixed.append(("body", key, "[authenticated]" if key in secret_body else str(value)))
    auth = tool.auth
    if auth.type == "api_key" and auth.name:
        fixed.append((auth.location, auth.name, "[authenticated]"))
    elif auth.type in ("bearer", "basic"):
        fixed.append(("header", "Authorization", "[authenticated]"))
    return fixed


def _output_lines(schema: dict[str, Any], prefix: str = "") -> list[str]:
    kind = schema.get("type")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return _output_lines(schema["items"], prefix=f"{prefix}[]")
    props = schema.get("properties")
    if kind == "object" and isinstance(props, dict):
        lines: list[str] = []
        for name, sub in props.items():
            sub = sub if isinstance(sub, dict) else {}
            lines.append(f"{prefix}{'.' if prefix else ''}{name} ({_type_name(sub)})")
        return lines
    return [f"{prefix or 'value'} ({_type_name(schema)})"]
