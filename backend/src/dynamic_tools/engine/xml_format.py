"""The seeds' XML workflow format (BPMN-inspired), read safely into the YAML-shaped mapping.

Parsed with defusedxml: DTDs, entities and external references are refused. Elements:

```
<workflows domain="" version="">
  <workflow id="" description="" timeout="">
    <params><param name="" type="" required="" format="" default="" description=""/></params>
    <graph>
      <step id="" depends_on="a,b">            call node
        <call tool=""/> <args><arg name="" value=""/></args> <output name=""/>
        <on_error retry="" delay="" backoff="" max_delay="" retry_on="5xx,429" fallback=""/>
        <compensate_with tool=""><args>...</args></compensate_with> <success when=""/>
      </step>
      <subworkflow id="" workflow=""> <args/> <output name=""/> </subworkflow>
      <branch id=""><condition when="" goto=""/> <default goto=""/></branch>
      <parallel id="" on_partial_failure="" concurrency=""> step | subworkflow ... </parallel>
      <foreach id="" items="" as="" max_iterations="" concurrency=""> step | subworkflow
               <output name=""/></foreach>
      <yield id="" message=""><expects><field name="" type="" required=""/></expects></yield>
      <compensate id="" ignore_error=""><step ignore_error=""><call tool=""/><args/></step>
      </compensate>
      <error id="" message=""/>
    </graph>
    <outputs><output name="" value=""/></outputs>
  </workflow>
</workflows>
```

An ``<arg>`` takes ``value`` (text; a ``$reference`` keeps its type when resolved) or
``json`` (any JSON value, e.g. an object body); ``type="int|float|bool"`` converts ``value``.
"""

from __future__ import annotations

import json
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from dynamic_tools.errors import WorkflowInvalidError
from dynamic_tools.nesting import TooDeep, loads_json

MAX_XML_DEPTH = 64  # elements; the same bound as the YAML and JSON forms' nesting


def xml_to_mapping(text: str) -> dict[str, Any]:
    """The document as the mapping its YAML form would give."""
    try:
        root = fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise _error("(document)", "unsafe_xml", f"refused: {type(exc).__name__}") from None
    except ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise _error("(document)", "syntax", f"invalid XML: {exc}", line=line) from None
    too_deep = _too_deep(root)
    if too_deep is not None:
        raise _error(
            too_deep, "max_depth", f"the document nests deeper than {MAX_XML_DEPTH} elements"
        )
    if root.tag != "workflows":
        raise _error(
            "(document)", "xml_root", f"the root element must be <workflows>, not <{root.tag}>"
        )
    doc: dict[str, Any] = {
        k: v for k, v in root.attrib.items() if k in ("domain", "version", "description")
    }
    workflows: dict[str, Any] = {}
    for child in root:
        if child.tag != "workflow":
            raise _error("(document)", "xml_element", f"unexpected <{child.tag}> in <workflows>")
        workflow_id = _required(child, "id", "workflows")
        workflows[workflow_id] = _workflow(child, f"workflows.{workflow_id}")
    doc["workflows"] = workflows
    return doc


def _too_deep(root: Element) -> str | None:
    """The path (``a/b/c``) of the first element deeper than ``MAX_XML_DEPTH``, else None.

    Checked with an explicit stack before the recursive conversion below walks the tree.
    """
    stack: list[tuple[Element, str, int]] = [(root, root.tag, 1)]
    while stack:
        element, path, depth = stack.pop()
        if depth > MAX_XML_DEPTH:
            return path
        stack.extend((child, f"{path}/{child.tag}", depth + 1) for child in element)
    return None


def _workflow(element: Element, path: str) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in _typed(element.attrib).items() if k != "id"}
    for child in element:
        if child.tag == "params":
            data["params"] = {
                _required(p, "name", f"{path}.params"): _param(p)
                for p in child
                if _expect(p, "param", f"{path}.params")
            }
        elif child.tag == "graph":
            data["graph"] = {
                _required(n, "id", f"{path}.graph"): _node(n, f"{path}.graph") for n in child
            }
        elif child.tag == "outputs":
            data["outputs"] = {
                _required(o, "name", f"{path}.outputs"): _arg_value(o)
                for o in child
                if _expect(o, "output", f"{path}.outputs")
            }
        else:
            raise _error(path, "xml_element", f"unexpected <{child.tag}> in <workflow>")
    return data


def _param(element: Element) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in _typed(element.attrib).items() if k != "name"}
    if "default" in data:
        data["default"] = _scalar(data["default"], data.get("type"))
    return data


_BOOL_ATTRS = frozenset({"required", "ignore_error", "jitter"})
_INT_ATTRS = frozenset({"retry", "delay", "max_delay", "max_iterations", "concurrency"})


def _typed(attrib: dict[str, str]) -> dict[str, Any]:
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


def _node(element: Element, path: str) -> dict[str, Any]:
    node_id = element.attrib.get("id", "?")
    here = f"{path}.{node_id}"
    attrs = {k: v for k, v in _typed(element.attrib).items() if k != "id"}
    if "depends_on" in attrs:
        attrs["depends_on"] = [d.strip() for d in attrs["depends_on"].split(",") if d.strip()]
    tag = element.tag
    if tag == "step":
        return {**attrs, **_call_body(element, here)}
    if tag == "subworkflow":
        return {**attrs, "type": "workflow", **_io(element, here)}
    if tag == "branch":
        cases, default = [], None
        for child in element:
            if child.tag == "condition":
                cases.append({"when": child.attrib.get("when"), "goto": child.attrib.get("goto")})
            elif child.tag == "default":
                default = child.attrib.get("goto")
            else:
                raise _error(here, "xml_element", f"unexpected <{child.tag}> in <branch>")
        return {**attrs, "type": "branch", "on": cases, "default": default}
    if tag == "parallel":
        branches = {_required(c, "id", here): _node(c, f"{here}.branches") for c in element}
        return {**attrs, "type": "parallel", "branches": branches}
    if tag == "foreach":
        data: dict[str, Any] = {**attrs, "type": "foreach"}
        for child in element:
            if child.tag == "output":
                data["output"] = _required(child, "name", here)
            elif child.tag in ("step", "subworkflow"):
                step = _node(child, here)
                data["step"] = step
            else:
                raise _error(here, "xml_element", f"unexpected <{child.tag}> in <foreach>")
        return data
    if tag == "yield":
        expects: dict[str, Any] = {}
        for child in element:
            if child.tag != "expects":
                raise _error(here, "xml_element", f"unexpected <{child.tag}> in <yield>")
            for field in child:
                _expect(field, "field", here)
                expects[_required(field, "name", here)] = {"required": True} | {
                    k: v for k, v in _typed(field.attrib).items() if k != "name"
                }
        return {**attrs, "type": "yield", "expects": expects}
    if tag == "compensate":
        steps = []
        for child in element:
            _expect(child, "step", here)
            body = _call_body(child, here)
            body.pop("type", None)
            if "ignore_error" in child.attrib:
                body["ignore_error"] = _typed(child.attrib)["ignore_error"]
            steps.append(body)
        return {**attrs, "type": "compensate", "steps": steps}
    if tag == "error":
        return {**attrs, "type": "error"}
    raise _error(here, "xml_element", f"unknown node element <{tag}>")


def _call_body(element: Element, path: str) -> dict[str, Any]:
    data: dict[str, Any] = {"type": "call"}
    for child in element:
        if child.tag == "call":
            data["call"] = _required(child, "tool", path)
        elif child.tag == "args":
            data["args"] = _args(child, path)
        elif child.tag == "output":
            data["output"] = _required(child, "name", path)
        elif child.tag == "on_error":
            data["on_error"] = _on_error(child)
        elif child.tag == "compensate_with":
            data["compensate_with"] = {
                "call": _required(child, "tool", path),
                **({"args": _args(child[0], path)} if len(child) else {}),
            }
        elif child.tag == "success":
            data["success"] = _required(child, "when", path)
        else:
            raise _error(path, "xml_element", f"unexpected <{child.tag}> in <step>")
    return data


def _io(element: Element, path: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for child in element:
        if child.tag == "args":
            data["args"] = _args(child, path)
        elif child.tag == "output":
            data["output"] = _required(child, "name", path)
        elif child.tag == "on_error":
            data["on_error"] = _on_error(child)
        else:
            raise _error(path, "xml_element", f"unexpected <{child.tag}> in <subworkflow>")
    return data


def _on_error(element: Element) -> dict[str, Any]:
    on_error = _typed(element.attrib)
    if isinstance(on_error.get("retry_on"), str):
        on_error["retry_on"] = [v.strip() for v in on_error["retry_on"].split(",")]
    return on_error


def _args(element: Element, path: str) -> dict[str, Any]:
    return {_required(a, "name", path): _arg_value(a) for a in element if _expect(a, "arg", path)}


def _arg_value(element: Element) -> Any:
    if "json" in element.attrib:
        try:
            return loads_json(element.attrib["json"], MAX_XML_DEPTH)
        except TooDeep:
            raise _error(
                element.attrib.get("name", "?"),
                "max_depth",
                f"the json attribute nests deeper than {MAX_XML_DEPTH} levels",
            ) from None
        except json.JSONDecodeError as exc:
            raise _error(
                element.attrib.get("name", "?"),
                "xml_json",
                f"the json attribute is not valid JSON: {exc.msg}",
            ) from None
    return _scalar(element.attrib.get("value", element.text or ""), element.attrib.get("type"))


def _scalar(value: str, kind: str | None) -> Any:
    try:
        if kind in ("int", "integer"):
            return int(value)
        if kind in ("float", "number"):
            return float(value)
        if kind in ("bool", "boolean"):
            return value.strip().lower() == "true"
    except ValueError:
        raise _error("(document)", "xml_value", f"'{value}' is not a valid {kind}") from None
    return value


def _required(element: Element, attribute: str, path: str) -> str:
    value = element.attrib.get(attribute)
    if not value:
        raise _error(path, "xml_attribute", f"<{element.tag}> needs the '{attribute}' attribute")
    return value


def _expect(element: Element, tag: str, path: str) -> bool:
    if element.tag != tag:
        raise _error(path, "xml_element", f"expected <{tag}>, found <{element.tag}>")
    return True


def _error(path: str, rule: str, message: str, *, line: int | None = None) -> WorkflowInvalidError:
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
    "xml_to_mapping",
]
