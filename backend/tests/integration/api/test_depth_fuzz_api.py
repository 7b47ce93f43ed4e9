"""Hypothesis over REST: long chains, deep documents, deep expressions and deep run params get a
structured answer (200, 201, 202 or a 4xx with the error shape), never a 500 (issue 27, item 5).

One real server for the module (uvicorn on a loopback port, in-process runs on mocked tools);
examples are few and bounded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dynamic_tools.api.app import create_app
from dynamic_tools.engine.local import MockTools
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.servers import free_port, serve

FEW = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
ARGS = {"city": "AMS", "checkin": "2026-12-01", "checkout": "2026-12-02"}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import shutil

    root: Path = tmp_path_factory.mktemp("fuzz") / "registry"
    shutil.copytree(EXAMPLES / "tools", root / "tools")
    port = free_port()
    settings_ = Settings(  # type: ignore[call-arg]
        _env_file=None,
        host="127.0.0.1",
        port=port,
        data_dir=root.parent / "data",
        registry_config_path=root / "config.yaml",
        durable_runs=False,
        allowed_target_hosts=[],
        freeze_startup_heap=False,  # the test process's heap: tests/conftest.py
    )
    tools = MockTools({"search_hotels": [{"id": "HT-1"}]})
    with serve(create_app(settings_, tool_runner=tools), port=port) as base:
        yield base


def _structured(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code < 500, answer.text
    body: dict[str, Any] = answer.json()
    if answer.status_code >= 400:
        assert body["error_code"] and body["message"]
    return body


def document(length: int, depth: int, parens: int) -> str:
    """A JSON workflow document: a chain of ``length`` calls, a param whose default nests
    ``depth`` levels, a ``when`` inside ``parens`` parentheses."""
    graph: dict[str, Any] = {}
    for i in range(length):
        graph[f"n{i}"] = {"call": "search_hotels", "args": ARGS}
        if i:
            graph[f"n{i}"]["depends_on"] = [f"n{i - 1}"]
    graph["check"] = {
        "type": "branch",
        "depends_on": [f"n{length - 1}"],
        "on": [{"when": "(" * parens + "$deep.length > 0" + ")" * parens, "goto": "done"}],
    }
    graph["done"] = {"call": "search_hotels", "args": ARGS}
    body = json.dumps(
        {
            "domain": "fuzz",
            "workflows": {
                "fuzzed": {"params": {"deep": {"type": "any", "default": []}}, "graph": graph}
            },
        }
    )
    return body.replace('"default": []', '"default": ' + "[" * depth + "]" * depth, 1)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """:func:`document` drawn: up to 5,000 nodes; mostly within the document's 64 levels and
    the expression's 50 (so the run goes ahead), sometimes far past them."""
    return document(
        draw(st.integers(min_value=1, max_value=5000)),
        draw(st.one_of(st.integers(1, 60), st.integers(min_value=61, max_value=3000))),
        draw(st.one_of(st.integers(0, 40), st.integers(min_value=41, max_value=999))),
    )


@FEW
@given(
    content=documents(),
    run_depth=st.one_of(st.integers(1, 100), st.integers(min_value=101, max_value=3000)),
)
@example(content=document(5000, 1, 0), run_depth=1)
@example(content=None, run_depth=1220)
def test_documents_and_runs_of_any_length_and_depth_get_a_structured_answer(
    url: str, content: str | None, run_depth: int
) -> None:
    with httpx.Client(base_url=url, timeout=120) as client:
        if content is not None:
            checked = _structured(
                client.post("/workflows/validate", json={"content": content, "format": "json"})
            )
            saved = client.put(
                "/workflows/fuzzed.json",
                json={"content": content, "format": "json", "overwrite": True},
            )
            _structured(saved)
            if not checked.get("valid"):
                return
        elif client.get("/workflows/fuzzed").status_code == 404:
            return
        params = '{"params": {"deep": ' + "[" * run_depth + "]" * run_depth + "}}"
        started = client.post(
            "/workflows/fuzzed/runs",
            content=params,
            headers={"content-type": "application/json"},
        )
        run = _structured(started)
        if started.status_code == 202:
            _structured(client.get(f"/runs/{run['run_id']}"))
        _structured(client.get("/workflows"))
