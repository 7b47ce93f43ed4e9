"""The ``branch`` node: activate the target of the first case whose condition holds.

A case without ``when`` (or the ``default``) is taken when no earlier case holds; a target
runs only when activated. The seeds' form ``- default:`` followed by ``goto:`` is accepted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field, model_validator

from dynamic_tools.engine.node_parts import FrozenModel, NodeBase
from dynamic_tools.engine.nodes.kind import (
    Kind,
    NodeAt,
    NodeChecks,
    NodeOutcome,
    Path,
    RunServices,
)
from dynamic_tools.engine.xml_reading import ReadNode, error

if TYPE_CHECKING:
    from dynamic_tools.engine.plan import RunPlan


class BranchCase(FrozenModel):
    """``when`` → ``goto`` (or ``end``); a case without ``when`` is the default."""

    when: str | None = None
    goto: str | None = Field(default=None, min_length=1)
    end: bool = Field(
        default=False,
        description="Activate nothing: what only this branch leads to is skipped, the "
        "workflow ends once what already runs settles.",
    )
    default: Any = Field(
        default=None,
        description="Seed syntax: a list item `- default:` with `goto:` marks the default case.",
    )

    @model_validator(mode="after")
    def _goto_or_end(self) -> BranchCase:
        if (self.goto is None) == (not self.end):
            raise ValueError("a case has either goto (a node) or end: true")
        return self


class BranchNode(NodeBase):
    """Activate the target of the first case whose condition holds (or the default)."""

    kind: Literal["branch"] = Field(alias="type")
    on: list[BranchCase] = Field(min_length=1)
    default: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _seed_default_syntax(cls, data: Any) -> Any:
        # Seeds write the default as a list item `- default:` followed by `goto: x`, which
        # YAML reads as {"default": None, "goto": "x"}; also accept `default: {goto: x}`.
        if not isinstance(data, dict) or not isinstance(data.get("on"), list):
            return data
        cases, default = [], data.get("default")
        if isinstance(default, dict):
            default = default.get("goto")
        for case in data["on"]:
            if isinstance(case, dict) and "default" in case and "when" not in case:
                inner = case.get("default")
                target = inner.get("goto") if isinstance(inner, dict) else case.get("goto")
                if default is not None and target is not None:
                    raise ValueError("a branch has more than one default")
                default = target
                continue
            cases.append(case)
        return {**data, "on": cases or data["on"], "default": default}


class BranchKind(Kind[BranchNode]):
    """Chooses one target to activate."""

    name = "branch"
    model = BranchNode
    written_as = "type: branch"

    xml_tags = ("branch",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        cases, default = [], None
        for child in element:
            if child.tag == "condition":
                case = {"when": child.attrib.get("when"), "goto": child.attrib.get("goto")}
                if child.attrib.get("end") == "true":
                    case["end"] = True
                cases.append(case)
            elif child.tag == "default":
                default = child.attrib.get("goto")
            else:
                raise error(here, "xml_element", f"unexpected <{child.tag}> in <branch>")
        return {**attrs, "type": "branch", "on": cases, "default": default}

    def targets(self, node: BranchNode, node_ids: Collection[str]) -> list[tuple[Path, str]]:
        found: list[tuple[Path, str]] = [
            (("on", i, "goto"), case.goto) for i, case in enumerate(node.on) if case.goto
        ]
        if node.default is not None:
            found.append((("default",), node.default))
        return found

    def check(self, node: BranchNode, checks: NodeChecks) -> None:
        for index, case in enumerate(node.on):
            if case.when is not None:
                checks.expression((*checks.here, "on", index, "when"), case.when)

    async def execute(self, node: BranchNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        target = node.default
        for case in node.on:
            if case.when is None or bool(run.evaluate(case.when, at.scope, at.full_id)):
                target = case.goto
                break
        return NodeOutcome(
            output={"goto": target}, activates=frozenset({target}) if target else frozenset()
        )

    def reuse_refusal(self, node: BranchNode, plan: RunPlan) -> str | None:
        return None

    def reuse(self, node: BranchNode, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        target = output.get("goto") if isinstance(output, dict) else None
        return NodeOutcome(output=output, activates=frozenset({target}) if target else frozenset())

    def label(self, node_id: str, node: BranchNode) -> str:
        return f"branch {node_id}"

    def details(self, node: BranchNode) -> dict[str, Any]:
        cases = [{"when": c.when, "goto": c.goto, "end": c.end or None} for c in node.on]
        return {"condition": {"cases": cases, "default": node.default}}

    def activation(self, node: BranchNode, path: Path) -> dict[str, Any]:
        if path[0] == "on":
            return {"via": "branch", "when": node.on[int(path[1])].when}
        return {"via": "branch_default", "when": None}

    def alternatives(
        self, node_id: str, node: BranchNode, label_of: Mapping[str, str]
    ) -> list[str]:
        lines = []
        for case in node.on:
            cond = f"when {case.when}" if case.when else "otherwise"
            goes = "end" if case.goto is None else label_of.get(case.goto, case.goto)
            lines.append(f"  ↘ {node_id}: {cond} → {goes}")
        if node.default:
            lines.append(f"  ↘ {node_id}: otherwise → {label_of.get(node.default, node.default)}")
        return lines


KIND = BranchKind()

__all__ = ["KIND", "BranchCase", "BranchKind", "BranchNode"]
