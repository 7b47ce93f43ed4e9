"""Node kinds live in one module each; nothing else switches on a node's kind.

Adding a kind means one module of ``engine/nodes/`` (its model and its :class:`Kind`) and a
line in the registry. These tests hold the code to that: each kind's model and behaviour share
their module, the ``Node`` union is the registry's, and no module outside ``engine/nodes/``
tests a node's class or compares its ``kind`` with a kind's name.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.nodes import KIND_NAMES, KINDS, Node, kind_of
from dynamic_tools.engine.nodes.kind import Kind
from dynamic_tools.engine.nodes.step_kind import StepKind

SRC = Path(__file__).resolve().parents[3] / "src" / "dynamic_tools"
NODES = SRC / "engine" / "nodes"
MODEL_NAMES = {kind.model.__name__ for kind in KINDS}


def test_the_registry_lists_the_eight_kinds_each_in_a_module_of_its_own() -> None:
    assert [k.name for k in KINDS] == [
        "call",
        "workflow",
        "branch",
        "parallel",
        "foreach",
        "yield",
        "compensate",
        "error",
    ]
    modules = [type(kind).__module__ for kind in KINDS]
    assert len(set(modules)) == len(KINDS)
    for kind in KINDS:
        module = type(kind).__module__
        assert module.startswith("dynamic_tools.engine.nodes.")
        assert kind.model.__module__ == module, f"{kind.name}: model and behaviour apart"
        assert (NODES / f"{module.rsplit('.', 1)[-1]}.py").is_file()


def test_the_node_union_is_the_registrys() -> None:
    union = typing.get_args(typing.get_args(Node)[0])
    assert set(union) == {kind.model for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_executes_and_renders_itself(kind: Kind[typing.Any]) -> None:
    cls = type(kind)
    executes = cls.execute is not Kind.execute
    steps = isinstance(kind, StepKind) and cls.run_step is not Kind.run_step
    assert executes or steps, f"{kind.name} has no execution of its own"
    assert cls.label is not Kind.label or cls.details is not Kind.details


def test_every_kind_reads_its_own_xml_element() -> None:
    tags = [tag for kind in KINDS for tag in kind.xml_tags]
    assert len(tags) == len(set(tags)) and all(kind.xml_tags for kind in KINDS)
    frame = (SRC / "engine" / "xml_format.py").read_text()
    for tag in tags:  # the document's frame names no node element
        assert f'"{tag}"' not in frame, tag


def test_kind_of_answers_for_every_node_of_a_document() -> None:
    document = WorkflowDocument.model_validate(
        {
            "workflows": {
                "w": {
                    "graph": {
                        "a": {"call": "t"},
                        "b": {"workflow": "w2", "depends_on": "a"},
                        "c": {"type": "branch", "on": [{"when": "true", "goto": "e"}]},
                        "d": {"type": "parallel", "branches": {"x": {"call": "t"}}},
                        "f": {
                            "type": "foreach",
                            "items": [1],
                            "step": {"call": "t"},
                            "max_iterations": 1,
                        },
                        "y": {"type": "yield", "expects": {"ok": "bool"}},
                        "u": {"type": "compensate", "steps": [{"call": "t"}]},
                        "e": {"type": "error"},
                    }
                },
                "w2": {"graph": {"a": {"call": "t"}}},
            }
        }
    )
    graph = document.workflows["w"].graph
    assert {kind_of(node).name for node in graph.values()} == KIND_NAMES


def _switches_on_kind(tree: ast.AST) -> list[tuple[int, str]]:
    """``isinstance(x, <a node model>)`` and ``x.kind == "<kind name>"`` in a module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if names & MODEL_NAMES:
                found.append((node.lineno, f"isinstance(..., {sorted(names & MODEL_NAMES)})"))
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            reads_kind = any(
                isinstance(p, ast.Attribute)
                and p.attr == "kind"
                # a planner's plan and the planner's own classes have kinds of their own
                and getattr(p.value, "id", None) not in ("self", "plan")
                for p in parts
            )
            names = {p.value for p in parts if isinstance(p, ast.Constant)}
            names |= {  # x.kind in ("call", "workflow")
                e.value
                for p in parts
                if isinstance(p, ast.Tuple | ast.List | ast.Set)
                for e in p.elts
                if isinstance(e, ast.Constant)
            }
            if reads_kind and names & KIND_NAMES:
                found.append((node.lineno, f"kind == {sorted(names & KIND_NAMES)}"))
    return found


def test_no_module_outside_the_kinds_switches_on_a_node_kind() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if NODES in path.parents:
            continue
        for line, what in _switches_on_kind(ast.parse(path.read_text(), str(path))):
            offenders.append(f"{path.relative_to(SRC)}:{line}: {what}")
    assert offenders == []


def test_the_scan_finds_a_switch_when_there_is_one() -> None:
    tree = ast.parse(
        "if isinstance(node, ParallelNode): pass\nif node.kind == 'yield': pass\n"
        "if isinstance(node, dict): pass\nif event.kind in ('call', 'workflow'): pass\n"
    )
    assert [line for line, _ in _switches_on_kind(tree)] == [1, 2, 4]
