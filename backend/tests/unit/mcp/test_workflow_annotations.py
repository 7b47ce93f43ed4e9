"""``w_*`` annotations, per node kind: what each kind contributes (its calls, or nothing), and
what each call's effect is (a tool's annotations, ``sql_query``, ``{prefix}_query``,
``rest_call``'s method, an unknown tool or sub-workflow)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.nodes import KINDS, CallSite
from dynamic_tools.mcp.workflow_tools import (
    READ_ONLY,
    UNKNOWN,
    CallEffect,
    call_effect,
    workflow_annotations,
)
from dynamic_tools.tools.models import ToolConfig
from tests.conftest import EXAMPLES


def tool(name: str) -> ToolConfig:
    return ToolConfig.model_validate(
        yaml.safe_load((EXAMPLES / "tools" / f"{name}.yaml").read_text())
    )


TOOLS = {t: tool(t) for t in ("search_flights", "create_booking", "cancel_booking")}


def effect(site: CallSite, *, choices: tuple[str, ...] = ("search_flights",)) -> CallEffect:
    return call_effect(site, TOOLS, query="api_query", query_choices=[TOOLS[c] for c in choices])


def hints(graph: dict[str, Any], **workflows: dict[str, Any]) -> tuple[bool | None, ...]:
    doc = WorkflowDocument.model_validate(
        {"workflows": {"w": {"graph": graph}, **{k: {"graph": g} for k, g in workflows.items()}}}
    )
    a = workflow_annotations("w", doc.workflows, effect)
    return a.read_only_hint, a.destructive_hint, a.idempotent_hint


SEARCH = {"call": "search_flights", "args": {"origin": "A", "destination": "B", "date": "x"}}
CANCEL = {"call": "cancel_booking", "args": {"booking_id": "B1"}}
ERROR = {"type": "error", "message": "no"}
# each kind, once with a read-only call (or none) and once with a destructive one
CASES: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "call": (SEARCH, CANCEL),
    "workflow": ({"workflow": "reads"}, {"workflow": "cancels"}),
    "branch": ({"type": "branch", "on": [{"when": "true", "goto": "e"}]}, None),
    "parallel": (
        {"type": "parallel", "branches": {"a": SEARCH, "b": {"workflow": "reads"}}},
        {"type": "parallel", "branches": {"a": SEARCH, "b": CANCEL}},
    ),
    "foreach": (
        {"type": "foreach", "items": "[1]", "as": "i", "max_iterations": 2, "step": SEARCH},
        {"type": "foreach", "items": "[1]", "as": "i", "max_iterations": 2, "step": CANCEL},
    ),
    "yield": ({"type": "yield", "message": "ok?", "expects": {"ok": "bool"}}, None),
    "compensate": (
        {"type": "compensate", "steps": [{"call": "search_flights"}]},
        {"type": "compensate", "steps": [CANCEL]},
    ),
    "error": (ERROR, None),
}
SUBS = {
    "reads": {"s": SEARCH, "q": {"call": "sql_query", "args": {"sql": "select 1"}}},
    "cancels": {"c": CANCEL},
}


def test_every_kind_has_a_case() -> None:
    assert set(CASES) == {kind.name for kind in KINDS}


@pytest.mark.parametrize("kind_name", list(CASES))
def test_each_kind_keeps_a_read_only_workflow_read_only(kind_name: str) -> None:
    reading, _ = CASES[kind_name]
    assert hints({"n": reading, "s": SEARCH, "e": ERROR}, **SUBS) == (True, False, True)


@pytest.mark.parametrize("kind_name", [k for k, (_, d) in CASES.items() if d is not None])
def test_each_calling_kind_passes_on_a_destructive_call(kind_name: str) -> None:
    _, destroying = CASES[kind_name]
    assert destroying is not None
    assert hints({"n": destroying, "s": SEARCH}, **SUBS) == (False, True, True)


def test_a_workflow_that_adds_is_neither_read_only_nor_destructive() -> None:
    book = {"call": "create_booking", "args": {}}
    assert hints({"s": SEARCH, "b": book}) == (False, False, False)


def test_the_effect_of_each_call() -> None:
    assert effect(CallSite(tool="sql_query")) == READ_ONLY
    assert effect(CallSite(tool="api_query")) == READ_ONLY
    unsafe = effect(CallSite(tool="api_query"), choices=("search_flights", "cancel_booking"))
    assert (unsafe.read_only, unsafe.destructive) == (False, True)  # X-Allow-Unsafe-Paths
    assert effect(CallSite(tool="rest_call", args={"method": "get"})) == READ_ONLY
    assert effect(CallSite(tool="rest_call", args={"method": "DELETE"})).destructive
    assert effect(CallSite(tool="rest_call", args={"method": "$m"})) == UNKNOWN
    assert effect(CallSite(tool="rest_call")) == UNKNOWN
    assert effect(CallSite(tool="nobody_knows")) == UNKNOWN
    assert effect(CallSite(workflow="unreadable")) == UNKNOWN
    assert effect(CallSite(tool="cancel_booking")).destructive  # annotated, though a POST


def test_a_sub_workflow_outside_the_document_is_unknown() -> None:
    assert hints({"w": {"workflow": "elsewhere"}}) == (False, True, False)
