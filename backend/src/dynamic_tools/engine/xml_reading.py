"""Reading XML elements into the mapping the YAML form gives: the parts node kinds share.

The document's frame (``<workflows>``, ``<workflow>``, ``<params>``, ``<graph>``) is read by
:mod:`dynamic_tools.engine.xml_format`; each node kind reads its own element
(:meth:`~dynamic_tools.engine.nodes.kind.Kind.from_xml`) with these helpers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from xml.etree.ElementTree import Element

from dynamic_tools.errors import WorkflowInvalidError
from dynamic_tools.safe_parsing import TooDeep, loads_json

MAX_XML_DEPTH = 64  # elements; the same bound as the YAML and JSON forms' nesting
ReadNode = Callable[[Element, str], dict[str, Any]]
"""Reads a nested node element (a parallel's branch, a foreach's step) at a path."""


_BOOL_ATTRS = frozenset({"required", "ignore_error", "jitter"})
_INT_ATTRS = frozenset({"retry", "delay", "max_delay", "max_iterations", "concurrency"})


def typed(attrib: dict[str, str]) -> dict[str, Any]:
    """Attributes with booleans and integers converted, so the mapping matches the schema."""
    out: dict[str, Any] = {}
    for key, value in attrib.items():
        if key in _BOOL_ATTRS and value.strip().lower() in ("true", "false"):
            out[key] = value.strip().lower() == "true"
        elif key in _INT_ATTRS and value.strip().isdigit():
            out[key] = int(value)
        elif key == "timeout" and value.replace(".", "", 1).isdigit():
            out[key] = float(value)
        else:
            out[key] = value
    return out


def call_body(element: Element, path: str) -> dict[str, Any]:
    """The body of a ``<step>``: ``<call>``, ``<args>``, ``<output>``, ``<on_error>``..."""
    data: dict[str, Any] = {"type": "call"}
    for child in element:
        if child.tag == "call":
            data["call"] = required(child, "tool", path)
        elif child.tag == "args":
            data["args"] = args(child, path)
        elif child.tag == "output":
            data["output"] = required(child, "name", path)
        elif child.tag == "on_error":
            data["on_error"] = on_error(child)
        elif child.tag == "compensate_with":
            data["compensate_with"] = {
                "call": required(child, "tool", path),
                **({"args": args(child[0], path)} if len(child) else {}),
            }
        elif child.tag == "success":
            data["success"] = required(child, "when", path)
        elif child.tag == "criterion":
            criterion = {"condition": required(child, "condition", path)}
            criterion.update({k: child.attrib[k] for k in ("type", "context") if k in child.attrib})
            data.setdefault("criteria", []).append(criterion)
        elif child.tag == "outputs":
            data["outputs"] = named_outputs(child, path)
        else:
            raise error(path, "xml_element", f"unexpected <{child.tag}> in <step>")
    return data


def named_outputs(element: Element, path: str) -> dict[str, Any]:
    """An ``<outputs>`` element of a step: ``<output name="" value=""/>`` each."""
    return {required(o, "name", path): arg_value(o) for o in element if expect(o, "output", path)}


def step_io(element: Element, path: str) -> dict[str, Any]:
    """The body of a ``<subworkflow>``: ``<args>``, ``<output>``, ``<on_error>``."""
    data: dict[str, Any] = {}
    for child in element:
        if child.tag == "args":
            data["args"] = args(child, path)
        elif child.tag == "output":
            data["output"] = required(child, "name", path)
        elif child.tag == "on_error":
            data["on_error"] = on_error(child)
        elif child.tag == "outputs":
            data["outputs"] = named_outputs(child, path)
        else:
            raise error(path, "xml_element", f"unexpected <{child.tag}> in <subworkflow>")
    return data


def on_error(element: Element) -> dict[str, Any]:
    """An ``<on_error>`` element: its attributes, ``retry_on`` split at commas."""
    policy = typed(element.attrib)
    if isinstance(policy.get("retry_on"), str):
        policy["retry_on"] = [v.strip() for v in policy["retry_on"].split(",")]
    return policy


def args(element: Element, path: str) -> dict[str, Any]:
    """An ``<args>`` element: name → value."""
    return {required(a, "name", path): arg_value(a) for a in element if expect(a, "arg", path)}


def arg_value(element: Element) -> Any:
    """The value of an ``<arg>`` (or an output): ``json``, else ``value`` of its ``type``."""
    if "json" in element.attrib:
        try:
            return loads_json(element.attrib["json"], MAX_XML_DEPTH)
        except TooDeep:
            raise error(
                element.attrib.get("name", "?"),
                "max_depth",
                f"the json attribute nests deeper than {MAX_XML_DEPTH} levels",
            ) from None
        except json.JSONDecodeError as exc:
            raise error(
                element.attrib.get("name", "?"),
                "xml_json",
                f"the json attribute is not valid JSON: {exc.msg}",
            ) from None
    return scalar(element.attrib.get("value", element.text or ""), element.attrib.get("type"))


def scalar(value: str, kind: str | None) -> Any:
    """``value`` converted to ``kind`` (int, float, bool), else the text."""
    try:
        if kind in ("int", "integer"):
            return int(value)
        if kind in ("float", "number"):
            return float(value)
        if kind in ("bool", "boolean"):
            return value.strip().lower() == "true"
    except ValueError:
        raise error("(document)", "xml_value", f"'{value}' is not a valid {kind}") from None
    return value


def required(element: Element, attribute: str, path: str) -> str:
    """The attribute's value; an error naming the element when it is missing."""
    value = element.attrib.get(attribute)
    if not value:
        raise error(path, "xml_attribute", f"<{element.tag}> needs the '{attribute}' attribute")
    return value


def expect(element: Element, tag: str, path: str) -> bool:
    """True when ``element`` is a ``<tag>``; an error otherwise."""
    if element.tag != tag:
        raise error(path, "xml_element", f"expected <{tag}>, found <{element.tag}>")
    return True


def error(path: str, rule: str, message: str, *, line: int | None = None) -> WorkflowInvalidError:
    """The error of an unreadable document, as one violation at ``path``."""
    return WorkflowInvalidError(
        message,
        violations=[
            {
                "path": path,
                "rule": rule,
                "message": message,
                "line": line,
                "expected": None,
                "actual": None,
                "severity": "error",
            }
        ],
    )


__all__ = [
    "MAX_XML_DEPTH",
    "ReadNode",
    "arg_value",
    "args",
    "call_body",
    "error",
    "expect",
    "on_error",
    "required",
    "scalar",
    "step_io",
    "typed",
]
