"""POST /workflow with tracing on: a pipeline span, a span per stage, the LLM calls' and the
API call's client spans under their stages with their trace context on the wire, and no
secret in any span.

The LLM is the scripted fake over loopback (the real ``openai`` client); the API call goes
to an ``httpx.MockTransport`` that records it.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES, TEST_API_KEY
from tests.support.app_client import app_client
from tests.support.fake_llm import FakeLLM, http_error, text, tool_call
from tests.support.spans import SpanRecorder, attr, everything_recorded, traceparent_ids

ITEMS_SECRET = "items-SECRET-0b7e4d2a91"
STAGES = [
    "tool_retrieval",
    "tool_context_generation",
    "llm_selection",
    "api_execution",
    "response_formatting",
]


@pytest.fixture
def sent() -> list[httpx.Request]:
    return []


@pytest.fixture
async def client(
    tmp_path: Path,
    make_settings: Callable[..., Settings],
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    spans: SpanRecorder,
    sent: list[httpx.Request],
) -> AsyncIterator[httpx.AsyncClient]:
    root = tmp_path / "pipeline-registry"
    shutil.copytree(FIXTURES / "tools" / "pipeline", root / "tools")
    monkeypatch.setenv("DT_SECRET_ITEMS_API_KEY", ITEMS_SECRET)
    settings = make_settings(
        registry_config_path=root / "config.yaml",
        openai_base_url=fake_llm.base_url,
        openai_api_key=TEST_API_KEY,
        allowed_target_hosts=["items.example"],
        enable_demo_api=False,
    )

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"id": "42", "name": "Lamp"})

    transport = httpx.MockTransport(answer)
    app = create_app(settings, http_transport=transport, tracing=spans.tracing)
    async with app_client(app) as c:
        yield c


async def run(client: httpx.AsyncClient, **extra: Any) -> dict[str, Any]:
    body = {"user_instructions": "Get item 42", "tool_ids": ["get_item", "create_item"], **extra}
    response = await client.post("/workflow", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_every_stage_is_a_span_under_the_pipeline(
    client: httpx.AsyncClient,
    fake_llm: FakeLLM,
    spans: SpanRecorder,
    sent: list[httpx.Request],
) -> None:
    fake_llm.script(
        tool_call("get_item", {"item_id": "42", "X-Trace": None, "fields": None}),
        text("Item 42 is a lamp."),
    )
    data = await run(client, format_response=True)
    assert data["status"] == "success" and data["formatted_response"] == "Item 42 is a lamp."

    pipeline = spans.one("pipeline")
    assert pipeline.parent is None
    assert attr(pipeline, "dt.outcome") == "succeeded" and attr(pipeline, "dt.tool") == "get_item"
    assert attr(pipeline, "gen_ai.usage.input_tokens") == data["usage"]["prompt_tokens"]
    assert attr(pipeline, "gen_ai.usage.output_tokens") == data["usage"]["completion_tokens"]
    stages = spans.children(pipeline)
    assert [s.name for s in sorted(stages, key=lambda s: s.start_time or 0)] == STAGES
    for stage in stages:
        assert attr(stage, "dt.stage") == stage.name
        assert attr(stage, "dt.outcome") == "succeeded"
        assert stage.status.status_code == StatusCode.UNSET

    # Each LLM call is a client span under its stage, and the LLM endpoint got its context.
    llm_calls = []
    for stage_name in ("llm_selection", "response_formatting"):
        (chat,) = spans.children(next(s for s in stages if s.name == stage_name))
        assert chat.kind == SpanKind.CLIENT and chat.name == "chat fake-model"
        assert attr(chat, "gen_ai.operation.name") == "chat"
        assert attr(chat, "gen_ai.request.model") == "fake-model"
        assert attr(chat, "gen_ai.usage.input_tokens") == 100
        assert attr(chat, "gen_ai.usage.output_tokens") == 20
        assert attr(chat, "server.address") == "127.0.0.1"
        assert chat.context is not None
        llm_calls.append(chat.context.span_id)
    assert [traceparent_ids(h["traceparent"])[1] for h in fake_llm.headers] == llm_calls

    # The API call is an HTTP client span under api_execution; the request carried its context.
    execution = next(s for s in stages if s.name == "api_execution")
    (http,) = spans.children(execution)
    assert http.kind == SpanKind.CLIENT and http.name == "GET"
    assert attr(http, "url.full") == "https://items.example/v1/items/42"  # no ?api_key=...
    assert attr(http, "http.response.status_code") == 200
    assert attr(http, "dt.tool") == "get_item"
    assert http.context is not None and pipeline.context is not None
    assert traceparent_ids(sent[0].headers["traceparent"]) == (
        pipeline.context.trace_id,
        http.context.span_id,
    )
    assert sent[0].url.params["api_key"] == ITEMS_SECRET  # the secret was sent, not recorded
    recorded = everything_recorded(spans.spans)
    assert ITEMS_SECRET not in recorded and TEST_API_KEY not in recorded
    assert "Get item 42" not in recorded  # nor the instructions


async def test_a_failed_stage_is_an_error_span_and_the_later_stages_do_not_run(
    client: httpx.AsyncClient, fake_llm: FakeLLM, spans: SpanRecorder
) -> None:
    data = await run(client, tool_ids=["get_item", "nope"])
    assert data["status"] == "error" and data["error_stage"] == "tool_retrieval"
    pipeline = spans.one("pipeline")
    assert attr(pipeline, "dt.outcome") == "failed"
    assert attr(pipeline, "error.type") == "tool_retrieval"
    assert pipeline.status.status_code == StatusCode.ERROR
    (stage,) = spans.children(pipeline)
    assert stage.name == "tool_retrieval" and attr(stage, "dt.outcome") == "failed"
    assert stage.status.status_code == StatusCode.ERROR
    assert not [s for s in spans.spans if s.kind == SpanKind.CLIENT]


async def test_a_failed_llm_call_is_an_error_span(
    client: httpx.AsyncClient, fake_llm: FakeLLM, spans: SpanRecorder
) -> None:
    fake_llm.script(http_error(503))
    data = await run(client)
    assert data["status"] == "error" and data["error_stage"] == "llm_selection"
    (chat,) = spans.children(spans.one("llm_selection"))
    assert attr(chat, "error.type") == "llm_unavailable"
    assert chat.status.status_code == StatusCode.ERROR


async def test_a_refused_target_is_an_error_http_span(
    client: httpx.AsyncClient,
    fake_llm: FakeLLM,
    spans: SpanRecorder,
    sent: list[httpx.Request],
) -> None:
    fake_llm.script(tool_call("metadata_probe", {}))
    data = await run(client, tool_ids=["metadata_probe"])
    assert data["status"] == "error" and data["error_stage"] == "api_execution"
    execution = spans.one("api_execution")
    assert attr(execution, "dt.outcome") == "failed"
    (http,) = spans.children(execution)
    assert attr(http, "error.type") == "refused" and http.status.status_code == StatusCode.ERROR
    assert attr(http, "url.full") == "http://169.254.169.254/latest/meta-data"
    assert sent == []
