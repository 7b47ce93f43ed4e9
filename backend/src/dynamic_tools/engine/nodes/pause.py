"""The ``yield`` node: pause the run with a message until values matching ``expects`` come.

The answer is checked against ``expects`` and becomes readable as ``$<node id>.<field>``;
with a ``timeout`` and no answer in time, the node fails. The module is ``pause`` because
``yield`` is a Python keyword.
"""

from __future__ import annotations

from typing import Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field, field_validator

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.node_parts import NodeBase, ParamSpec
from dynamic_tools.engine.nodes.kind import (
    Kind,
    NodeAt,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.params import check_values
from dynamic_tools.engine.state import RunFailed
from dynamic_tools.engine.xml_reading import ReadNode, error, expect, required, typed


class YieldNode(NodeBase):
    """Pause the run with a message until values matching ``expects`` are given."""

    kind: Literal["yield"] = Field(alias="type")
    message: str = ""
    expects: dict[str, ParamSpec] = Field(default_factory=dict)

    @field_validator("expects", mode="before")
    @classmethod
    def _short_types(cls, value: Any) -> Any:
        if isinstance(value, dict):  # seeds write `expects: {selected_flight_id: str}`
            return {
                k: ({"type": v, "required": True} if isinstance(v, str) else v)
                for k, v in value.items()
            }
        return value


class YieldKind(Kind[YieldNode]):
    """Waits for an answer from outside the run."""

    name = "yield"
    model = YieldNode
    written_as = "type: yield"

    xml_tags = ("yield",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        expects: dict[str, Any] = {}
        for child in element:
            if child.tag != "expects":
                raise error(here, "xml_element", f"unexpected <{child.tag}> in <yield>")
            for field in child:
                expect(field, "field", here)
                expects[required(field, "name", here)] = {"required": True} | {
                    k: v for k, v in typed(field.attrib).items() if k != "name"
                }
        return {**attrs, "type": "yield", "expects": expects}

    def answer_fields(self, node: YieldNode) -> frozenset[str] | None:
        return frozenset(node.expects)

    def reference_sources(self, node: YieldNode, here: Path) -> list[ReferenceSource]:
        return [ReferenceSource(node.message, (*here, "message"))]

    async def execute(self, node: YieldNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        full_id = at.full_id
        message = str(run.render(node.message, at.scope, full_id))
        expects = _expects(node)
        state = run.node_state(full_id)
        state.status, state.detail = "waiting_input", {"message": message, "expects": expects}
        await run.emit(ev.WaitingInput(node_id=full_id, message=message, expects=expects))
        values = await run.steps.wait_for_input(f"yield:{full_id}", node.timeout)
        if values is None:
            raise RunFailed(f"no answer to '{full_id}' within {node.timeout} s", node_id=full_id)
        checked = check_values(node.expects, values, what="values")
        await run.emit(ev.Resumed(node_id=full_id, values=checked))
        at.scope.yields[at.node_id] = checked
        return NodeOutcome(output=checked)

    def label(self, node_id: str, node: YieldNode) -> str:
        return f"ask the user ({node_id})"

    def details(self, node: YieldNode) -> dict[str, Any]:
        return {"message": node.message, "expects": _expects(node)}

    def pause(self, node_id: str, node: YieldNode) -> str | None:
        return f'{node_id}: "{node.message}" expects {", ".join(node.expects) or "an answer"}'


def _expects(node: YieldNode) -> dict[str, Any]:
    return {k: v.model_dump(exclude_none=True) for k, v in node.expects.items()}


KIND = YieldKind()

__all__ = ["KIND", "YieldKind", "YieldNode"]
