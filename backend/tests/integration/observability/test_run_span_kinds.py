"""Run spans for node kinds beyond plain calls, made by the RunTracing hooks around a real
interpreter and a real run store (SQLite): foreach items (named ``loop/*``, one retried),
an in-memory ``sql_query``, a branch, a compensate node's steps, an error node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import LocalSteps, MockTools, Responses
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.observability.run_tracing import RunTracing
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.run_store import RunStore
from tests.conftest import FIXTURES
from tests.support.plans import DocumentRunner
from tests.support.spans import SpanRecorder, attr


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    migrate(engine)
    yield engine
    engine.dispose()


async def test_items_builtins_branches_and_compensate_nodes(
    database: Engine, spans: SpanRecorder
) -> None:
    text = (FIXTURES / "observability" / "engine" / "kinds.yaml").read_text()
    document = load_document(text, name="kinds.yaml").document
    store = RunStore(database)
    runs = RunTracing(spans.tracing)
    store.observe(runs.observe)
    tools = MockTools(
        {
            "lookup": Responses([ToolResult(503, {}), {"code": "x"}]),
            "release": {"released": True},
        }
    )
    run = await store.create_run(workflow_id="fan_out", params={})
    interpreter = DocumentRunner(
        document,
        run_id=run.run_id,
        tools=runs.tools(tools),
        steps=LocalSteps(),
        events=runs.events(store),
    )
    outcome = await interpreter.run("fan_out", {})
    assert outcome.status == "failed", outcome.error
    await store.flush()  # the run's spans come from its stored events

    root = spans.one("run fan_out")
    assert attr(root, "dt.outcome") == "failed"
    assert root.status.description == "node stop failed", outcome.error
    children = spans.children(root)
    assert {s.name for s in children} == {
        "node loop/*",
        "node loop",
        "node summarize",
        "node pick",
        "node undo",
        "node stop",
        "compensate undo",
    }
    items = sorted(
        (attr(s, "dt.node_id"), attr(s, "dt.attempt"), attr(s, "dt.outcome"))
        for s in spans.named("node loop/*")
    )
    assert items == [
        ("loop/0", 1, "failed"),
        ("loop/0", 2, "succeeded"),
        ("loop/1", 1, "succeeded"),
        ("loop/2", 1, "succeeded"),
    ]
    assert attr(spans.one("node loop"), "dt.node_kind") == "foreach"
    summarize = spans.one("node summarize")
    assert attr(summarize, "dt.node_kind") == "call" and attr(summarize, "dt.tool") == "sql_query"
    assert attr(spans.one("node pick"), "dt.node_kind") == "branch"
    assert attr(spans.one("node undo"), "dt.outcome") == "succeeded"
    stop = spans.one("node stop")
    assert attr(stop, "dt.node_kind") == "error" and attr(stop, "dt.outcome") == "failed"
    steps = sorted(attr(s, "dt.compensation") for s in spans.named("compensate undo"))
    assert steps == ["undo:0", "undo:1"]
    assert {attr(s, "dt.tool") for s in spans.named("compensate undo")} == {"release"}
    await store.aclose()
