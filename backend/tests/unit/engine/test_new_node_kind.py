"""A new node kind is one module: this file is that module, for a ``note`` kind.

``note`` records an interpolated text in the run (it calls nothing). Everything it needs — its
model, a rule of its own, its references, its execution, its views and why it has no Arazzo
equivalent — is written here and nowhere else; the validator, the plan, the interpreter, the
step view, the MCP description, the node-kind reference, the Arazzo exporter and the graph the
UI draws then handle it without a change. (A kind of the product is listed in
``engine/nodes/__init__.py:KINDS``, which also puts its model in the document's node union;
here the test registers it and builds a document model whose graph takes it.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from pydantic import Field

from dynamic_tools.definitions.arazzo.export import export_arazzo
from dynamic_tools.definitions.node_reference import node_kind_reference
from dynamic_tools.definitions.step_views import drawn_graph, step_order
from dynamic_tools.engine import events as ev
from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.models import Workflow, WorkflowDocument
from dynamic_tools.engine.node_parts import NodeBase
from dynamic_tools.engine.nodes import KINDS, node_union, register
from dynamic_tools.engine.nodes.kind import (
    Kind,
    NodeAt,
    NodeChecks,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.plan import compile_plan
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.mcp.workflow_text import tool_description
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES


# --- the module of the new kind ----------------------------------------------------------------
class NoteNode(NodeBase):
    """Record a text in the run; its ``$references`` are filled in."""

    kind: Literal["note"] = Field(alias="type")
    text: str = ""


class NoteKind(Kind[NoteNode]):
    name = "note"
    model = NoteNode
    written_as = "type: note"
    no_arazzo_equivalent = "a note node has no Arazzo equivalent: Arazzo steps call APIs"

    def reference_sources(self, node: NoteNode, here: Path) -> list[ReferenceSource]:
        return [ReferenceSource(node.text, (*here, "text"))]

    def check(self, node: NoteNode, checks: NodeChecks) -> None:
        if not node.text.strip():
            checks.add((*checks.here, "text"), "empty_note", "a note needs a text")

    async def execute(self, node: NoteNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        return NodeOutcome(output={"note": run.render(node.text, at.scope, at.full_id)})

    def label(self, node_id: str, node: NoteNode) -> str:
        return f"note ({node_id})"

    def details(self, node: NoteNode) -> dict[str, Any]:
        return {"text": node.text}


# --- a document model whose graph takes it -----------------------------------------------------
NoteGraphNode = node_union(NoteNode)


class NoteWorkflow(Workflow):
    graph: dict[str, NoteGraphNode] = Field(min_length=1)  # type: ignore[assignment]


class NoteDocument(WorkflowDocument):
    workflows: dict[str, NoteWorkflow] = Field(min_length=1)  # type: ignore[assignment]


DOCUMENT = {
    "domain": "travel",
    "workflows": {
        "greet": {
            "params": {"name": {"type": "str", "required": True}},
            "graph": {
                "hello": {"type": "note", "text": "hello $name"},
                "lookup": {"call": "search_flights", "args": {"who": "$name"}, "output": "found"},
                "bye": {"type": "note", "text": "found $found.count", "depends_on": "lookup"},
            },
        }
    },
}


@pytest.fixture(autouse=True)
def note_kind() -> Iterator[NoteKind]:
    kind = NoteKind()
    undo = register(kind)
    yield kind
    undo()


def test_validation_applies_the_kinds_own_rule_and_checks_its_references() -> None:
    bad = {
        "workflows": {
            "w": {
                "graph": {
                    "empty": {"type": "note", "text": " "},
                    "stray": {"type": "note", "text": "for $nobody"},
                }
            }
        }
    }
    report = validate_document(NoteDocument.model_validate(bad), known_tools=set())
    found = {(v.path, v.rule) for v in report.errors}
    assert found == {
        ("workflows.w.graph.empty.text", "empty_note"),
        ("workflows.w.graph.stray.text", "unknown_reference"),
    }
    good = validate_document(NoteDocument.model_validate(DOCUMENT), known_tools={"search_flights"})
    assert good.ok, good.errors


async def test_a_run_executes_the_new_kind_between_calls() -> None:
    document = NoteDocument.model_validate(DOCUMENT)
    plan = compile_plan(document, "greet", {"search_flights"})
    events = EventList()
    tools = MockTools({"search_flights": {"count": 2}})
    interpreter = Interpreter(plan, run_id="r1", tools=tools, steps=LocalSteps(), events=events)
    outcome = await interpreter.run(plan.check_params({"name": "Ada"}))
    assert outcome.status == "succeeded", outcome.error
    assert outcome.nodes["hello"].output == {"note": "hello Ada"}
    assert outcome.nodes["bye"].output == {"note": "found 2"}
    started = [e for e in events.typed if isinstance(e, ev.NodeStarted)]
    assert [(e.node_id, e.kind) for e in started] == [
        ("hello", "note"),
        ("lookup", "call"),
        ("bye", "note"),
    ]


def test_the_views_and_the_reference_show_it() -> None:
    workflow = NoteDocument.model_validate(DOCUMENT).workflows["greet"]
    steps = {s["node_id"]: s for s in step_order(workflow)}
    assert steps["hello"]["kind"] == "note" and steps["hello"]["text"] == "hello $name"
    assert steps["bye"]["runs"] == "after dependencies"
    text = tool_description("greet", workflow, domain="travel")
    assert "note (hello) → search_flights → note (bye)" in text
    reference = node_kind_reference([*KINDS, NoteKind()])
    assert "## note" in reference and "| `text` | str | default `''` |" in reference


def test_the_arazzo_export_lists_it_as_having_no_equivalent_with_its_reason() -> None:
    document = NoteDocument.model_validate(DOCUMENT)
    tools = ToolRegistry(EXAMPLES / "tools", variables={"PUBLIC_BASE_URL": "https://t.example"})
    tools.reload()
    export = export_arazzo("greet", document.workflows, tools.find)
    steps = export.arazzo["workflows"][0]["steps"]
    assert [step["stepId"] for step in steps] == ["lookup"]
    assert steps[0]["operationId"] == "search_flights"
    notes = [w for w in export.warnings if w["path"].startswith("workflows.greet.graph.")]
    assert notes == [
        {
            "path": f"workflows.greet.graph.{node}",
            "rule": "no_arazzo_equivalent",
            "message": "a note node has no Arazzo equivalent: Arazzo steps call APIs",
        }
        for node in ("hello", "bye")
    ]


def test_the_graph_the_ui_draws_has_its_kind_and_label() -> None:
    workflow = NoteDocument.model_validate(DOCUMENT).workflows["greet"]
    drawn = {node["id"]: node for node in drawn_graph(workflow)}
    assert drawn["hello"] == {
        "id": "hello",
        "kind": "note",
        "label": "note (hello)",
        "depends_on": [],
        "activates": [],
    }
    assert (drawn["bye"]["kind"], drawn["bye"]["label"]) == ("note", "note (bye)")
    assert drawn["bye"]["depends_on"] == ["lookup"]
    assert (drawn["lookup"]["kind"], drawn["lookup"]["label"]) == ("call", "search_flights")
