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
    ArazzoSteps,
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


def kind_of_name(node: Any) -> str:
    """The kind name of ``node`` (its ``type``)."""
    return str(node.kind)


MAX_LOOPS = 1000
"""The most times a loop may go back."""

LOOP_KINDS = frozenset({"call", "branch", "error"})
"""The node kinds a loop may run again (their steps are named per round)."""


class BranchCase(FrozenModel):
    """``when`` → ``goto`` (or ``end``); a case without ``when`` is the default."""

    when: str | None = None
    goto: str | None = Field(default=None, min_length=1)
    end: bool = Field(
        default=False,
        description="Activate nothing: what only this branch leads to is skipped, the "
        "workflow ends once what already runs settles.",
    )
    max_loops: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LOOPS,
        description="A goto back to an earlier node is a loop: the nodes from there on run "
        "again, at most this many times (then the run fails).",
    )
    default: Any = Field(
        default=None,
        description="Seed syntax: a list item `- default:` with `goto:` marks the default case.",
    )

    @model_validator(mode="after")
    def _goto_or_end(self) -> BranchCase:
        if (self.goto is None) == (not self.end):
            raise ValueError("a case has either goto (a node) or end: true")
        if self.max_loops is not None and self.goto is None:
            raise ValueError("max_loops bounds a goto back to an earlier node")
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
                case: dict[str, Any] = {
                    "when": child.attrib.get("when"),
                    "goto": child.attrib.get("goto"),
                }
                if child.attrib.get("end") == "true":
                    case["end"] = True
                if "max_loops" in child.attrib:
                    bound = child.attrib["max_loops"].strip()
                    case["max_loops"] = int(bound) if bound.isdigit() else bound
                cases.append(case)
            elif child.tag == "default":
                default = child.attrib.get("goto")
            else:
                raise error(here, "xml_element", f"unexpected <{child.tag}> in <branch>")
        return {**attrs, "type": "branch", "on": cases, "default": default}

    def targets(self, node: BranchNode, node_ids: Collection[str]) -> list[tuple[Path, str]]:
        found: list[tuple[Path, str]] = [
            (("on", i, "goto"), case.goto)
            for i, case in enumerate(node.on)
            if case.goto and case.max_loops is None
        ]
        if node.default is not None:
            found.append((("default",), node.default))
        return found

    def loop_targets(self, node: BranchNode) -> list[tuple[Path, str, int]]:
        return [
            (("on", i, "goto"), case.goto, case.max_loops)
            for i, case in enumerate(node.on)
            if case.goto and case.max_loops is not None
        ]

    def check(self, node: BranchNode, checks: NodeChecks) -> None:
        for index, case in enumerate(node.on):
            if case.when is not None:
                checks.expression((*checks.here, "on", index, "when"), case.when)
        graph = checks.graph
        for path, target, _bound in self.loop_targets(node):
            where = (*checks.here, *path)
            if target not in graph.nodes:
                checks.add(where, "unknown_target", f"'{target}' is not a node of this workflow")
                continue
            region = graph.reachable_from(target)
            if checks.node_id not in region:
                checks.add(
                    where,
                    "loop_target",
                    f"max_loops marks a goto back, but '{target}' does not lead to "
                    f"'{checks.node_id}': use a plain goto",
                    actual=target,
                )
                continue
            for member in region:
                kind = kind_of_name(graph.nodes[member])
                if kind not in LOOP_KINDS:
                    checks.add(
                        where,
                        "loop_body",
                        f"the loop back to '{target}' would run '{member}' ({kind}) again; a "
                        "loop may hold only call, branch and error nodes",
                        actual=member,
                    )

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

    def arazzo_step(
        self, node_id: str, node: BranchNode, out: ArazzoSteps
    ) -> dict[str, Any] | None:
        return None  # written by arazzo_actions, once the step it follows is

    def arazzo_actions(self, node_id: str, node: BranchNode, out: ArazzoSteps) -> None:
        """The cases as ``onSuccess`` actions of the one step the branch follows."""
        previous = [d for d in node.depends_on if out.step(d) is not None]
        if len(previous) != 1:
            out.warn(
                node_id,
                "a branch is the onSuccess of the one step it follows; this one "
                f"follows {len(previous)} steps and is left out",
            )
            return
        actions = []
        for index, case in enumerate(node.on):
            action: dict[str, Any] = {"name": f"{node_id}_{index}"}
            target = case.goto
            if case.end or target is None:
                action["type"] = "end"
            else:
                goto = out.goto(target)
                action.update(goto)
                if goto["type"] == "end":
                    out.warn(target, "an error node reached by a branch ends the workflow instead")
            if case.when:
                action["criteria"] = [{"condition": out.condition(case.when, node_id)}]
            actions.append(action)
        if node.default:
            actions.append({"name": f"{node_id}_default", "type": "goto", "stepId": node.default})
        step = out.step(previous[0])
        assert step is not None
        step.setdefault("onSuccess", []).extend(actions)

    def label(self, node_id: str, node: BranchNode) -> str:
        return f"branch {node_id}"

    def details(self, node: BranchNode) -> dict[str, Any]:
        cases: list[dict[str, Any]] = []
        for case in node.on:
            shown: dict[str, Any] = {"when": case.when, "goto": case.goto}
            if case.end:
                shown["end"] = True
            if case.max_loops:
                shown["max_loops"] = case.max_loops
            cases.append(shown)
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
            if case.max_loops:
                goes += f" (back, at most {case.max_loops} times)"
            lines.append(f"  ↘ {node_id}: {cond} → {goes}")
        if node.default:
            lines.append(f"  ↘ {node_id}: otherwise → {label_of.get(node.default, node.default)}")
        return lines


KIND = BranchKind()

__all__ = ["KIND", "BranchCase", "BranchKind", "BranchNode"]
