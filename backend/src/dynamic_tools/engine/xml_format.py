"""The designs' XML workflow format (BPMN-inspired), read safely into the YAML-shaped mapping.

Parsed with defusedxml: DTDs, entities and external references are refused. Elements:

```
<workflows domain="" version="">
  <workflow id="" description="" timeout="">
    <params><param name="" type="" required="" format="" default="" description=""/></params>
    <graph>
      <step id="" depends_on="a,b">            call node
        <call tool=""/> <args><arg name="" value=""/></args> <output name=""/>
        <on_error retry="" delay="" backoff="" max_delay="" retry_on="5xx,429" retry_if=""
                  fallback=""/>
        <compensate_with tool=""><args>...</args></compensate_with> <success when=""/>
        <criterion condition="" type="" context=""/>  <outputs><output name="" value=""/></outputs>
      </step>
      <subworkflow id="" workflow=""> <args/> <output name=""/> <outputs/> </subworkflow>
      <branch id=""><condition when="" goto="" max_loops=""/> (or end="true") <default goto=""/>
      </branch>
      <parallel id="" on_partial_failure="" concurrency=""> step | subworkflow ... </parallel>
      <foreach id="" items="" as="" max_iterations="" concurrency=""> step | subworkflow
               <output name=""/></foreach>
      <yield id="" message=""><expects><field name="" type="" required="">
               <choices from="" value="" label=""/></field></expects></yield>
      <compensate id="" ignore_error=""><step ignore_error=""><call tool=""/><args/></step>
      </compensate>
      <error id="" message=""/>
    </graph>
    <outputs><output name="" value=""/></outputs>
    <triggers>
      <schedule name="" cron="" every="" timezone="" overlap="" catch_up="" enabled="">
        <params><arg name="" value=""/></params></schedule>
      <webhook name="" secret="" filter="" enabled=""><params><arg .../></params></webhook>
    </triggers>
  </workflow>
</workflows>
```

This module reads the frame (``<workflows>``, ``<workflow>``, ``<params>``, ``<graph>``,
``<outputs>``); each node element is read by its kind (``engine/nodes/``), with the helpers
of ``engine/xml_reading.py``.

An ``<arg>`` takes ``value`` (text; a ``$reference`` keeps its type when resolved) or
``json`` (any JSON value, e.g. an object body); ``type="int|float|bool"`` converts ``value``.
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from dynamic_tools.engine.nodes import KINDS
from dynamic_tools.engine.xml_reading import (
    MAX_XML_DEPTH,
    arg_value,
    args,
    error,
    expect,
    required,
    scalar,
    typed,
)

_BY_TAG = {tag: kind for kind in KINDS for tag in kind.xml_tags}


def xml_to_mapping(text: str) -> dict[str, Any]:
    """The document as the mapping its YAML form would give."""
    try:
        root = fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise error("(document)", "unsafe_xml", f"refused: {type(exc).__name__}") from None
    except ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise error("(document)", "syntax", f"invalid XML: {exc}", line=line) from None
    too_deep = _too_deep(root)
    if too_deep is not None:
        raise error(
            too_deep, "max_depth", f"the document nests deeper than {MAX_XML_DEPTH} elements"
        )
    if root.tag != "workflows":
        raise error(
            "(document)", "xml_root", f"the root element must be <workflows>, not <{root.tag}>"
        )
    doc: dict[str, Any] = {
        k: v for k, v in root.attrib.items() if k in ("domain", "version", "description")
    }
    workflows: dict[str, Any] = {}
    for child in root:
        if child.tag != "workflow":
            raise error("(document)", "xml_element", f"unexpected <{child.tag}> in <workflows>")
        workflow_id = required(child, "id", "workflows")
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
    data: dict[str, Any] = {k: v for k, v in typed(element.attrib).items() if k != "id"}
    for child in element:
        if child.tag == "params":
            data["params"] = {
                required(p, "name", f"{path}.params"): _param(p)
                for p in child
                if expect(p, "param", f"{path}.params")
            }
        elif child.tag == "graph":
            data["graph"] = {
                required(n, "id", f"{path}.graph"): _node(n, f"{path}.graph") for n in child
            }
        elif child.tag == "outputs":
            data["outputs"] = {
                required(o, "name", f"{path}.outputs"): arg_value(o)
                for o in child
                if expect(o, "output", f"{path}.outputs")
            }
        elif child.tag == "triggers":
            data["triggers"] = [_trigger(t, f"{path}.triggers") for t in child]
        else:
            raise error(path, "xml_element", f"unexpected <{child.tag}> in <workflow>")
    return data


def _trigger(element: Element, path: str) -> dict[str, Any]:
    """A ``<schedule>`` or ``<webhook>``: its attributes, and ``<params>`` as args."""
    if element.tag not in ("schedule", "webhook"):
        raise error(path, "xml_element", f"expected <schedule> or <webhook>, found <{element.tag}>")
    data: dict[str, Any] = {"kind": element.tag, "name": required(element, "name", path)}
    for key, value in element.attrib.items():
        if key == "enabled" and value.strip().lower() in ("true", "false"):
            data[key] = value.strip().lower() == "true"
        elif key != "name":
            data[key] = value
    for child in element:
        if child.tag != "params":
            raise error(path, "xml_element", f"unexpected <{child.tag}> in <{element.tag}>")
        data["params"] = args(child, f"{path}.{data['name']}.params")
    return data


def _param(element: Element) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in typed(element.attrib).items() if k != "name"}
    if "default" in data:
        data["default"] = scalar(data["default"], data.get("type"))
    return data


def _node(element: Element, path: str) -> dict[str, Any]:
    """A node element, read by the kind whose element it is."""
    node_id = element.attrib.get("id", "?")
    here = f"{path}.{node_id}"
    attrs = {k: v for k, v in typed(element.attrib).items() if k != "id"}
    if "depends_on" in attrs:
        attrs["depends_on"] = [d.strip() for d in attrs["depends_on"].split(",") if d.strip()]
    kind = _BY_TAG.get(element.tag)
    if kind is None:
        raise error(here, "xml_element", f"unknown node element <{element.tag}>")
    return kind.from_xml(element, attrs, here, _node)


__all__ = [
    "MAX_XML_DEPTH",
    "xml_to_mapping",
]
