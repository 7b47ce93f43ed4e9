"""Node kinds live in one module each; nothing else switches on a node's kind.

Adding a kind means one module of ``engine/nodes/`` (its model and its :class:`Kind`) and a
line in the registry. These tests hold the code to that: each kind's model and behaviour share
their module, the ``Node`` and ``StepNode`` unions are the registry's, each kind declares its
Arazzo export (or why it has none), and no module outside ``engine/nodes/`` tests a node's
class or compares a kind's name with a node's kind, however read (``x.kind``, a helper, a
table keyed by kind names, a ``match``).
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
from dynamic_tools.engine.nodes.steps import STEP_KINDS, StepNode

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


def test_the_step_union_is_the_registrys_step_kinds() -> None:
    union = typing.get_args(typing.get_args(StepNode)[0])
    assert set(union) == {kind.model for kind in KINDS if kind.is_step}
    assert {kind.model for kind in STEP_KINDS} == set(union)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_declares_its_arazzo_export_or_why_it_has_none(kind: Kind[typing.Any]) -> None:
    cls = type(kind)
    writes = (
        cls.arazzo_step is not Kind.arazzo_step or cls.arazzo_actions is not Kind.arazzo_actions
    )
    reason = kind.no_arazzo_equivalent
    assert writes != bool(reason), f"{kind.name}: an Arazzo export, or a reason for none"
    if reason:
        assert f"{kind.name} node has no Arazzo equivalent" in reason


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


def _kind_names_in(node: ast.AST) -> set[str]:
    """Kind names written as string literals in ``node`` (alone, or in a tuple, list or set)."""
    parts = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {p.value for p in parts if isinstance(p, ast.Constant) and p.value in KIND_NAMES}


def _names_a_kind(node: ast.AST) -> bool:
    """Whether ``node`` reads a node's kind (``x.kind``, ``_kind(x)``, ``kind_of(x).name``...).

    A planner's plan and the planner's own classes (``self.kind``, ``plan.kind``) have kinds
    of their own. A helper is a function whose name says kind (``_kind``, ``node_kind``,
    ``kind_of``), or ``getattr(x, "kind")``; the ``.name`` of what a call gives counts too.
    """
    if isinstance(node, ast.Attribute):
        if node.attr == "kind":
            return getattr(node.value, "id", None) not in ("self", "plan")
        return node.attr == "name" and isinstance(node.value, ast.Call)
    if isinstance(node, ast.Name):
        return "kind" in node.id.lower()
    if isinstance(node, ast.Call):
        func = node.func
        called = getattr(func, "id", None) or getattr(func, "attr", "")
        if called == "getattr" and len(node.args) > 1:
            return getattr(node.args[1], "value", None) in ("kind", "type")
        return "kind" in called.lower()
    return False


def _switches_on_kind(tree: ast.AST) -> list[tuple[int, str]]:
    """Code that tells node kinds apart by class or by name, outside the kinds' modules.

    ``isinstance(x, <a node model>)``; a comparison of a kind name (a string literal) with a
    node's kind however it is read (``x.kind``, a variable ``kind``, a helper such as
    ``_kind(x)``, ``kind_of(x).name``); a table keyed by kind names (``{"call": ...}``); and a
    ``match`` case on a kind name.
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if names & MODEL_NAMES:
                found.append((node.lineno, f"isinstance(..., {sorted(names & MODEL_NAMES)})"))
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            names = set().union(*(_kind_names_in(p) for p in parts))
            if names and any(_names_a_kind(p) for p in parts):
                found.append((node.lineno, f"kind == {sorted(names)}"))
        if isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            named = [k.value for k in keys if isinstance(k, ast.Constant) and k.value in KIND_NAMES]
            if len(named) >= 2 and len(named) == len(keys):
                found.append((node.lineno, f"a table keyed by kinds {sorted(named)}"))
        if isinstance(node, ast.Match) and _names_a_kind(node.subject):
            for case in node.cases:
                names = {
                    p.value.value
                    for p in ast.walk(case.pattern)
                    if isinstance(p, ast.MatchValue)
                    and isinstance(p.value, ast.Constant)
                    and p.value.value in KIND_NAMES
                }
                if names:
                    found.append((case.pattern.lineno, f"case {sorted(names)}"))
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


def test_the_scan_finds_kind_names_compared_through_helpers_and_tables() -> None:
    tree = ast.parse(
        "if _kind(node) == 'branch': pass\n"  # 1: a helper
        "if kind_of(target).name != 'error': pass\n"  # 2: the registry's name
        "if kind in {'parallel', 'foreach'}: pass\n"  # 3: a variable holding a kind
        "STEPS = {'call': write_call, 'workflow': write_workflow}\n"  # 4: a table by kind
        "match step_kind(node).name:\n"
        "    case 'yield': pass\n"  # 6: a match case
        "    case _: pass\n"
        "if name == 'error': pass\n"  # a reference named error, not a kind
        "if self.kind == 'call': pass\n"  # a planner's own kind
        "answer = {'error': 1, 'result': 2}\n"  # a mapping that is no table of kinds
        "if v.get('severity') == 'error': pass\n"  # a call that reads no kind
        "if getattr(node, 'kind', None) == 'foreach': pass\n"  # 12: getattr of the kind
    )
    assert sorted(line for line, _ in _switches_on_kind(tree)) == [1, 2, 3, 4, 6, 12]
