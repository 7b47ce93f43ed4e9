"""Long, wide and nested workflows over REST: no recursion on their shape (issue 27, item 5).

A 400-node ``depends_on`` chain used to answer 500 (a RecursionError in the skip analysis) on
validate, save and reload while ``GET /workflows`` listed it as valid. A 5,000-node chain (the
most a 1 MB document holds, near enough) and a node joining 5,000 others now validate, save,
reload, list, show their step plan and run to success on the in-process runner; a durable run
(DBOS on SQLite) of a 1,000-node chain runs over REST too (5,000 take about 30 s there, too long
for a test). Sub-workflows nest at most 16 levels: a deeper document is refused naming the
chain, including a chain through another document.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.engine.local import MockTools
from dynamic_tools.engine.nodes.workflow import MAX_WORKFLOW_DEPTH
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mocked_runs import wait_for

ARGS = {"city": "AMS", "checkin": "2026-12-01", "checkout": "2026-12-02"}


def chain(length: int, workflow_id: str = "long_chain") -> str:
    """A JSON document: one workflow of ``length`` calls, each waiting for the one before."""
    graph: dict[str, Any] = {}
    for i in range(length):
        node: dict[str, Any] = {"call": "search_hotels", "args": ARGS}
        if i:
            node["depends_on"] = [f"n{i - 1}"]
        graph[f"n{i}"] = node
    return json.dumps({"domain": "limits", "workflows": {workflow_id: {"graph": graph}}})


def wide(width: int) -> str:
    """``width`` independent calls and a node joining them all (it reads the last output)."""
    graph: dict[str, Any] = {f"n{i}": {"call": "search_hotels", "args": ARGS} for i in range(width)}
    graph[f"n{width - 1}"]["output"] = "last"
    graph["join"] = {
        "call": "search_hotels",
        "args": {**ARGS, "city": "$last.0.id"},
        "depends_on": [f"n{i}" for i in range(width)],
    }
    return json.dumps({"domain": "limits", "workflows": {"wide": {"graph": graph}}})


def nested(levels: int, prefix: str = "w", last: str | None = None) -> str:
    """Workflows ``<prefix>0`` … calling each other ``levels`` deep (the last one calls a tool,
    or the workflow ``last`` of another document)."""
    workflows: dict[str, Any] = {}
    for i in range(levels + 1):
        if i < levels:
            node: dict[str, Any] = {"workflow": f"{prefix}{i + 1}"}
        elif last is not None:
            node = {"workflow": last}
        else:
            node = {"call": "search_hotels", "args": ARGS}
        workflows[f"{prefix}{i}"] = {"graph": {"step": node}}
    return json.dumps({"domain": "limits", "workflows": workflows})


@pytest.fixture
def tools() -> MockTools:
    return MockTools({"search_hotels": [{"id": "HT-1"}]})


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()  # the registry holds the travel example's tools


@pytest.fixture
async def client(settings: Settings, tools: MockTools) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(create_app(settings, tool_runner=tools)) as api:
        yield api


async def _save_and_run(
    client: httpx.AsyncClient, content: str, file: str, workflow_id: str, timeout_s: float = 60
) -> dict[str, Any]:
    checked = await client.post("/workflows/validate", json={"content": content, "format": "json"})
    assert checked.status_code == 200, checked.text
    answer = checked.json()
    assert (answer["valid"], answer["violations"]) == (True, [])
    drawn = answer["graphs"][workflow_id]  # every node drawn, however many
    assert len(drawn) == len(json.loads(content)["workflows"][workflow_id]["graph"])
    saved = await client.post(
        "/workflows", json={"content": content, "format": "json", "file": file}
    )
    assert saved.status_code == 201, saved.text
    started = await client.post(f"/workflows/{workflow_id}/runs", json={"params": {}})
    assert started.status_code == 202, started.text
    return await wait_for(client, started.json()["run_id"], timeout_s=timeout_s)


async def test_a_5000_node_chain_validates_saves_reloads_lists_and_runs(
    client: httpx.AsyncClient, settings: Settings, tools: MockTools
) -> None:
    content = chain(5000)
    run = await _save_and_run(client, content, "chain.json", "long_chain")
    assert run["status"] == "succeeded", run["error"]
    assert len(tools.calls) == 5000
    assert {node["status"] for node in run["nodes"].values()} == {"succeeded"}

    # the same document written by hand, then read back by a reload and listed
    (settings.workflows_dir / "by_hand.json").write_text(chain(5000, "by_hand"))
    reloaded = await client.post("/workflows/_reload")
    assert reloaded.status_code == 200, reloaded.text
    assert reloaded.json()["problems"] == []
    listed = {w["id"]: w for w in (await client.get("/workflows")).json()["workflows"]}
    assert listed["long_chain"]["valid"] and listed["by_hand"]["valid"]
    plan = await client.get("/workflows/by_hand/plan")
    assert plan.status_code == 200, plan.text
    assert [s["node_id"] for s in plan.json()["steps"]] == [f"n{i}" for i in range(5000)]


async def test_a_node_joining_5000_others_runs_after_all_of_them(
    client: httpx.AsyncClient, tools: MockTools
) -> None:
    run = await _save_and_run(client, wide(5000), "wide.json", "wide")
    assert run["status"] == "succeeded", run["error"]
    assert len(tools.calls) == 5001
    assert tools.calls[-1][1]["city"] == "HT-1"  # the join read the last output


async def test_sub_workflows_16_levels_deep_run_and_17_are_refused_naming_the_chain(
    client: httpx.AsyncClient,
) -> None:
    run = await _save_and_run(client, nested(MAX_WORKFLOW_DEPTH), "nested.json", "w0")
    assert run["status"] == "succeeded", run["error"]
    assert f"step/{'step/' * (MAX_WORKFLOW_DEPTH - 1)}step" in run["nodes"]

    deeper = nested(MAX_WORKFLOW_DEPTH + 1, prefix="d")
    checked = (
        await client.post("/workflows/validate", json={"content": deeper, "format": "json"})
    ).json()
    assert not checked["valid"]
    (top,) = [v for v in checked["violations"] if v["path"] == "workflows.d0"]
    assert top["rule"] == "workflow_depth" and top["actual"] == MAX_WORKFLOW_DEPTH + 1
    assert "d0 → d1" in top["message"] and f"at most {MAX_WORKFLOW_DEPTH}" in top["message"]
    refused = await client.post(
        "/workflows", json={"content": deeper, "format": "json", "file": "deeper.json"}
    )
    assert refused.status_code == 422, refused.text


async def test_a_chain_of_sub_workflows_through_another_document_counts_every_level(
    client: httpx.AsyncClient,
) -> None:
    saved = await client.post(
        "/workflows",
        json={"content": nested(MAX_WORKFLOW_DEPTH - 1), "format": "json", "file": "base.json"},
    )
    assert saved.status_code == 201, saved.text  # w0 … w15: 15 levels
    over = nested(1, prefix="x", last="w0")  # x0 → x1 → w0 → … → w15: 17 levels; x1: 16
    checked = (
        await client.post("/workflows/validate", json={"content": over, "format": "json"})
    ).json()
    rules = {v["path"]: (v["rule"], v["actual"]) for v in checked["violations"]}
    assert rules == {"workflows.x0": ("workflow_depth", MAX_WORKFLOW_DEPTH + 1)}


@pytest.mark.timeout(300)  # 1,000 durable steps: 38 s alone on a slow 2-core VM, over 60 s loaded
async def test_a_durable_run_of_a_1000_node_chain_succeeds_over_rest(
    make_settings: Callable[..., Settings], tools: MockTools
) -> None:
    settings = make_settings(durable_runs=True, executor_id="long-chain")
    async with app_client(create_app(settings, tool_runner=tools)) as client:
        run = await _save_and_run(client, chain(1000), "chain.json", "long_chain", timeout_s=120)
    assert run["status"] == "succeeded", run["error"]
    assert len(run["nodes"]) == 1000
    assert len(tools.calls) == 1000
