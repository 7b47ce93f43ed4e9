"""What each node kind contributes to its workflow's behaviour hints (:meth:`Kind.calls`).

A call node its tool (and its undo), a sub-workflow node the workflow it runs, a parallel node
its branches' calls, a foreach node its step's, a compensate node its undo steps; a branch, a
yield and an error call nothing. :func:`calls_reached` follows sub-workflows transitively.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.nodes import KINDS, CallSite, calls_reached, kind_of

NODES: dict[str, dict[str, Any]] = {
    "call": {
        "call": "create_booking",
        "args": {"flight": "F1"},
        "compensate_with": {"call": "cancel_booking", "args": {"id": "x"}},
    },
    "workflow": {"workflow": "inner", "args": {"q": "x"}},
    "branch": {"type": "branch", "on": [{"when": "true", "goto": "e"}]},
    "parallel": {
        "type": "parallel",
        "branches": {"a": {"call": "get_a"}, "b": {"workflow": "inner"}},
    },
    "foreach": {
        "type": "foreach",
        "items": "[1, 2]",
        "as": "item",
        "max_iterations": 5,
        "step": {"call": "get_item", "args": {"id": "$item"}},
    },
    "yield": {"type": "yield", "message": "pick one", "expects": {"choice": "str"}},
    "compensate": {"type": "compensate", "steps": [{"call": "undo_a"}, {"call": "undo_b"}]},
    "error": {"type": "error", "message": "no"},
}
EXPECTED: dict[str, list[CallSite]] = {
    "call": [
        CallSite(tool="create_booking", args={"flight": "F1"}),
        CallSite(tool="cancel_booking", args={"id": "x"}, undo=True),
    ],
    "workflow": [CallSite(workflow="inner", args={"q": "x"})],
    "branch": [],
    "parallel": [CallSite(tool="get_a"), CallSite(workflow="inner")],
    "foreach": [CallSite(tool="get_item", args={"id": "$item"})],
    "yield": [],
    "compensate": [CallSite(tool="undo_a", undo=True), CallSite(tool="undo_b", undo=True)],
    "error": [],
}


def document(graph: dict[str, Any], **workflows: dict[str, Any]) -> WorkflowDocument:
    return WorkflowDocument.model_validate(
        {
            "workflows": {
                "outer": {"graph": graph},
                **{k: {"graph": g} for k, g in workflows.items()},
            }
        }
    )


def test_every_kind_is_covered() -> None:
    assert set(NODES) == set(EXPECTED) == {kind.name for kind in KINDS}


@pytest.mark.parametrize("kind_name", list(NODES))
def test_each_kind_declares_its_calls(kind_name: str) -> None:
    doc = document({"n": NODES[kind_name], "e": {"type": "error", "message": "x"}})
    node = doc.workflows["outer"].graph["n"]
    assert kind_of(node).name == kind_name
    assert kind_of(node).calls(node) == EXPECTED[kind_name]


def test_calls_reached_follows_sub_workflows_through_every_kind_once() -> None:
    doc = document(
        {
            "p": NODES["parallel"],
            "f": {**NODES["foreach"], "step": {"workflow": "deep"}},
            "y": NODES["yield"],
        },
        inner={
            "s": {"call": "sql_query", "args": {"sql": "select 1"}},
            "again": {"workflow": "outer"},
        },
        deep={"d": {"call": "rest_call", "args": {"method": "GET", "path": "/x"}}},
    )
    found = calls_reached("outer", doc.workflows)
    assert sorted(site.tool or "" for site in found) == ["get_a", "rest_call", "sql_query"]
    assert all(site.workflow is None for site in found)  # sub-workflows are walked, not listed


def test_a_sub_workflow_that_cannot_be_read_stays_unknown() -> None:
    doc = document({"w": {"workflow": "elsewhere"}})
    assert calls_reached("outer", doc.workflows) == [CallSite(workflow="elsewhere")]
