"""The ``compensate`` node: undo steps, run only when activated.

Something activates it: a branch ``goto``, a fallback, or a ``parallel`` whose
``on_partial_failure`` names it (the parallel then runs it itself and fails, handled). Each
step's failure fails the node unless it (or the node) says ``ignore_error``.
"""

from __future__ import annotations

from typing import Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field

from dynamic_tools.engine.errors import UnresolvedReferenceError
from dynamic_tools.engine.node_parts import NodeBase, ToolStep
from dynamic_tools.engine.nodes.kind import (
    CallSite,
    Kind,
    NodeAt,
    NodeChecks,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import RunFailed
from dynamic_tools.engine.xml_reading import ReadNode, call_body, expect, typed


class CompensateNode(NodeBase):
    """Undo steps, run only when activated (abort of a parallel, a fallback, a goto)."""

    kind: Literal["compensate"] = Field(alias="type")
    steps: list[ToolStep] = Field(min_length=1)
    ignore_error: bool = False


class CompensateKind(Kind[CompensateNode]):
    """Calls undo tools in order."""

    name = "compensate"
    model = CompensateNode
    written_as = "type: compensate"
    only_when_activated = True

    no_arazzo_equivalent = (
        "a compensate node has no Arazzo equivalent and is left out: Arazzo has no undo"
    )
    xml_tags = ("compensate",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        steps = []
        for child in element:
            expect(child, "step", here)
            body = call_body(child, here)
            body.pop("type", None)
            if "ignore_error" in child.attrib:
                body["ignore_error"] = typed(child.attrib)["ignore_error"]
            steps.append(body)
        return {**attrs, "type": "compensate", "steps": steps}

    def reference_sources(self, node: CompensateNode, here: Path) -> list[ReferenceSource]:
        return [
            ReferenceSource(step.args, (*here, "steps", i, "args"))
            for i, step in enumerate(node.steps)
        ]

    def tools(self, node: CompensateNode) -> list[str]:
        return [step.call for step in node.steps]

    def undo_tools(self, node: CompensateNode) -> list[str]:
        return self.tools(node)

    def calls(self, node: CompensateNode) -> list[CallSite]:
        return [CallSite(tool=step.call, args=step.args, undo=True) for step in node.steps]

    def check(self, node: CompensateNode, checks: NodeChecks) -> None:
        for index, step in enumerate(node.steps):
            checks.tool((*checks.here, "steps", index, "call"), step.call, step.args)

    def check_reach(self, node: CompensateNode, checks: NodeChecks) -> None:
        if not checks.graph.is_activated(checks.node_id):
            checks.add(
                checks.here,
                "never_activated",
                f"compensate node '{checks.node_id}' is never activated (no goto, fallback "
                "or on_partial_failure names it)",
                severity="warning",
            )

    async def execute(self, node: CompensateNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        return NodeOutcome(output=await run_undo_steps(node, at.full_id, at.scope, run))

    def label(self, node_id: str, node: CompensateNode) -> str:
        return "undo: " + ", ".join(s.call for s in node.steps)

    def details(self, node: CompensateNode) -> dict[str, Any]:
        return {"steps": [step.call for step in node.steps]}


async def run_undo_steps(
    node: CompensateNode, full_id: str, scope: Scope, run: RunServices
) -> list[dict[str, Any]]:
    """Call each undo step once, in order; what each did."""
    done: list[dict[str, Any]] = []
    for index, step in enumerate(node.steps):
        try:
            args = run.render(step.args, scope, full_id)
        except UnresolvedReferenceError as exc:
            if step.ignore_error or node.ignore_error:
                done.append({"call": step.call, "skipped": exc.message})
                continue
            raise RunFailed(exc.message, node_id=full_id) from None
        result = await run.compensation_call(f"{full_id}:{index}", step.call, args)
        if not result["ok"] and not (step.ignore_error or node.ignore_error):
            raise RunFailed(f"compensation {step.call} failed: {result['error']}", node_id=full_id)
        done.append(result)
    return done


KIND = CompensateKind()

__all__ = ["KIND", "CompensateKind", "CompensateNode", "run_undo_steps"]
