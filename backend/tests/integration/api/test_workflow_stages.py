"""POST /workflow: every error stage, validation, re-asks, formatting, secrets and SSRF.

The LLM is the real ``openai`` client talking to the scripted fake over loopback; outbound
API calls go to an ``httpx.MockTransport`` that records them.
"""

from __future__ import annotations

import json
import shutil
import ssl
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import h11
import httpx
import pytest
from loguru import logger

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES, TEST_API_KEY
from tests.support.app_client import app_client
from tests.support.fake_llm import FakeLLM, http_error, refusal, text, tool_call

ITEMS_SECRET = "items-SECRET-4c1d9e77aa"


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.responder: Callable[[httpx.Request], httpx.Response] = lambda r: httpx.Response(
            200, json={"id": "42", "name": "Lamp"}
        )

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.responder(request)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def pipeline_settings(
    tmp_path: Path,
    make_settings: Callable[..., Settings],
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> Settings:
    root = tmp_path / "pipeline-registry"
    shutil.copytree(FIXTURES / "tools" / "pipeline", root / "tools")
    monkeypatch.setenv("DT_SECRET_ITEMS_API_KEY", ITEMS_SECRET)
    return make_settings(
        registry_config_path=root / "config.yaml",
        openai_base_url=fake_llm.base_url,
        openai_api_key=TEST_API_KEY,
        allowed_target_hosts=["items.example"],
        enable_demo_api=False,
    )


@pytest.fixture
async def client(
    pipeline_settings: Settings, recorder: Recorder
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(pipeline_settings, http_transport=httpx.MockTransport(recorder))
    async with app_client(app) as c:
        yield c


async def run(
    client: httpx.AsyncClient,
    instructions: str = "Get item 42",
    tools: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body = {
        "user_instructions": instructions,
        "tool_ids": tools or ["get_item", "create_item"],
        **extra,
    }
    response = await client.post("/workflow", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_success_reports_every_stage(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    fake_llm.script(tool_call("get_item", {"item_id": "42", "X-Trace": None, "fields": None}))
    data = await run(client)
    assert data["status"] == "success" and data["error"] is None
    assert data["selected_tool"] == "get_item"
    assert data["http_spec"] == {
        "method": "GET",
        "url": "https://items.example/v1/items/42",
        "query_params": {"api_key": "***"},
    }
    assert data["raw_response"]["status_code"] == 200
    assert data["raw_response"]["body"] == {"id": "42", "name": "Lamp"}
    assert set(data["timings_ms"]) == {
        "tool_retrieval",
        "tool_context_generation",
        "llm_selection",
        "api_execution",
        "total",
    }
    assert data["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "llm_calls": 1,
    }
    sent = recorder.requests[0]
    assert sent.url.params["api_key"] == ITEMS_SECRET  # injected at send time only
    # The model was offered both tools and "none suitable", and the required choice.
    offered = fake_llm.requests[0]
    assert [t["function"]["name"] for t in offered["tools"]] == [
        "get_item",
        "create_item",
        "none_suitable",
    ]
    assert offered["tool_choice"] == "required"
    strict = {t["function"]["name"]: t["function"].get("strict", False) for t in offered["tools"]}
    assert strict == {"get_item": True, "create_item": False, "none_suitable": True}
    assert "[authenticated]" in offered["messages"][0]["content"]


async def test_missing_tools_are_listed_and_no_llm_is_called(
    client: httpx.AsyncClient, fake_llm: FakeLLM
) -> None:
    data = await run(client, tools=["get_item", "nope", "also_nope"])
    assert data["status"] == "error" and data["error_stage"] == "tool_retrieval"
    assert "nope" in data["error"] and "also_nope" in data["error"]
    assert data["selected_tool"] is None and data["http_spec"] is None
    assert fake_llm.requests == []


async def test_an_oversized_tool_context_fails_at_context_generation(
    pipeline_settings: Settings, recorder: Recorder, fake_llm: FakeLLM
) -> None:
    settings = pipeline_settings.model_copy(update={"llm_context_max_chars": 1000})
    app = create_app(settings, http_transport=httpx.MockTransport(recorder))
    async with app_client(app) as small:
        data = await run(small)
    assert data["error_stage"] == "tool_context_generation"
    assert "LLM_CONTEXT_MAX_CHARS" in data["error"]
    assert fake_llm.requests == []


async def test_no_llm_configured_names_the_settings(
    pipeline_settings: Settings, recorder: Recorder
) -> None:
    settings = pipeline_settings.model_copy(
        update={"openai_base_url": None, "openai_api_key": None}
    )
    async with app_client(create_app(settings, http_transport=httpx.MockTransport(recorder))) as c:
        data = await run(c)
        ready = (await c.get("/readyz")).json()  # told up front too: what to set, no value
    assert ready["checks"]["llm"]["configured"] is False
    assert "OPENAI_API_KEY" in ready["checks"]["llm"]["needs"]
    assert data["error_stage"] == "llm_selection"
    assert "OPENAI_API_KEY" in data["error"] and "OPENAI_BASE_URL" in data["error"]
    assert recorder.requests == []


async def test_an_invalid_answer_is_re_asked_with_the_error(
    client: httpx.AsyncClient, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        tool_call("get_item", {"item_id": 42}),  # wrong type
        tool_call("get_item", {"item_id": "42"}),
    )
    data = await run(client)
    assert data["status"] == "success"
    assert len(fake_llm.requests) == 2
    feedback = fake_llm.requests[1]["messages"][-1]
    assert feedback["role"] == "tool" and "item_id" in feedback["content"]
    assert "is not of type 'string'" in feedback["content"]
    assert any("re-ask" in w for w in data["warnings"])


async def test_three_invalid_answers_fail_at_llm_selection(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    bad = tool_call("get_item", {"item_id": "42", "admin": True})
    fake_llm.script(bad, bad, bad, tool_call("get_item", {"item_id": "42"}))
    data = await run(client)
    assert data["error_stage"] == "llm_selection"
    assert "after 3 attempt(s)" in data["error"] and "admin" in data["error"]
    assert len(fake_llm.requests) == 3 and recorder.requests == []


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (tool_call("none_suitable", {"reason": "no weather tool"}), "no suitable tool"),
        (refusal("I can't help with that"), "refused"),
        (http_error(500), "500"),
        (http_error(429), "429"),
    ],
)
async def test_final_llm_failures(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder, reply: Any, message: str
) -> None:
    fake_llm.script(reply)
    data = await run(client)
    assert data["error_stage"] == "llm_selection"
    assert message in data["error"]
    assert len(fake_llm.requests) == 1 and recorder.requests == []


@pytest.mark.parametrize(
    "reply",
    [
        tool_call("delete_everything", {}),
        tool_call("get_item", '{"item_id": "42"'),
        tool_call("get_item", {"item_id": "42"}, finish_reason="length"),
        text("I would call get_item with 42"),
        tool_call("get_item", {"item_id": "42", "url": "http://169.254.169.254/latest"}),
        tool_call("get_item", {"item_id": "../admin"}),
        tool_call("get_item", {"item_id": "%2e%2e"}),
        tool_call("get_item", {"item_id": "42", "X-Trace": "a\r\nX-Admin: true"}),
    ],
    ids=[
        "unknown-tool",
        "invalid-json",
        "truncated",
        "no-call",
        "url-argument",
        "dot-dot-path",
        "encoded-dot-dot",
        "header-injection",
    ],
)
async def test_corrupt_answers_are_caught_before_any_request(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder, reply: Any
) -> None:
    fake_llm.script(reply, reply, reply)
    data = await run(client)
    assert data["error_stage"] == "llm_selection", data
    assert len(fake_llm.requests) == 3
    assert recorder.requests == []


async def test_http_error_statuses_are_a_success_and_redirects_are_not_followed(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    recorder.responder = lambda r: httpx.Response(404, json={"detail": "no such item"})
    fake_llm.script(tool_call("get_item", {"item_id": "7"}))
    data = await run(client)
    assert data["status"] == "success"
    assert data["raw_response"]["status_code"] == 404
    recorder.responder = lambda r: httpx.Response(
        302, headers={"Location": "http://169.254.169.254/latest/meta-data"}
    )
    fake_llm.script(tool_call("get_item", {"item_id": "7"}))
    data = await run(client)
    assert data["raw_response"]["status_code"] == 302
    assert [str(r.url.host) for r in recorder.requests] == ["items.example", "items.example"]


async def test_refused_targets_fail_at_api_execution(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    fake_llm.script(tool_call("metadata_probe", {}))
    data = await run(client, "read metadata", tools=["metadata_probe"])
    assert data["error_stage"] == "api_execution"
    assert "169.254.169.254" in data["error"] and "ALLOWED_TARGET_HOSTS" in data["error"]
    fake_llm.script(tool_call("closed_port", {}))
    data = await run(client, "status", tools=["closed_port"])
    assert data["error_stage"] == "api_execution"
    assert recorder.requests == []


async def test_transport_failures_fail_at_api_execution(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    def boom(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"connection refused for {request.url}")

    recorder.responder = boom
    fake_llm.script(tool_call("get_item", {"item_id": "42"}))
    data = await run(client)
    assert data["error_stage"] == "api_execution"
    assert data["error"] == "GET https://items.example/v1/items/42 failed (ConnectError)"
    assert data["selected_tool"] == "get_item" and data["http_spec"] is not None


async def test_formatting_success_and_failure(client: httpx.AsyncClient, fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_call("get_item", {"item_id": "42"}), text("Item 42 is a lamp."))
    data = await run(client, format_response=True, response_format_instructions="One line.")
    assert data["formatted_response"] == "Item 42 is a lamp."
    assert "One line." in fake_llm.requests[1]["messages"][1]["content"]
    assert "tools" not in fake_llm.requests[1]
    assert data["usage"]["llm_calls"] == 2 and "response_formatting" in data["timings_ms"]

    fake_llm.script(tool_call("get_item", {"item_id": "42"}), http_error(500))
    data = await run(client, format_response=True)
    assert data["status"] == "success" and data["formatted_response"] is None
    assert any(w.startswith("response_formatting failed") for w in data["warnings"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tool_ids": ["get_item"]}, "body.user_instructions"),
        ({"user_instructions": "x"}, "body.tool_ids"),
        ({"user_instructions": "x", "tool_ids": []}, "body.tool_ids"),
        ({"user_instructions": "   ", "tool_ids": ["a"]}, "body.user_instructions"),
        (
            {"user_instructions": "x", "tool_ids": ["a"], "format_response": "maybe"},
            "body.format_response",
        ),
        ({"user_instructions": "x", "tool_ids": ["a"], "surprise": 1}, "body.surprise"),
    ],
)
async def test_invalid_bodies_get_422_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/workflow", json=body)
    assert response.status_code == 422
    data = response.json()
    assert data["error_code"] == "invalid_input"
    assert field in [v["path"] for v in data["violations"]]


async def test_a_body_that_is_not_json_gets_422(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/workflow", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["violations"][0]["message"] == "the body is not valid JSON"


async def test_secrets_never_reach_the_llm_responses_or_logs(
    client: httpx.AsyncClient,
    fake_llm: FakeLLM,
    recorder: Recorder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    captured: list[str] = []
    sink = logger.add(captured.append, serialize=True, level="DEBUG")

    def failing(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused: {request.url}")

    bodies: list[str] = []
    fake_llm.script(tool_call("get_item", {"item_id": "42"}), text("Lamp."))
    bodies.append(json.dumps(await run(client, format_response=True)))
    fake_llm.script(tool_call("create_item", {"name": "Chair", "price": 3}))
    bodies.append(json.dumps(await run(client, "create a chair")))
    recorder.responder = failing
    fake_llm.script(tool_call("get_item", {"item_id": "42"}))
    bodies.append(json.dumps(await run(client)))
    bodies.append((await client.get("/tools/get_item")).text)
    bodies.append((await client.get("/tools")).text)

    # The secret was really sent (so the test can fail), in the query and the bearer header.
    assert recorder.requests[0].url.params["api_key"] == ITEMS_SECRET
    assert recorder.requests[1].headers["authorization"] == f"Bearer {ITEMS_SECRET}"
    llm_traffic = json.dumps(fake_llm.requests)
    logger.remove(sink)
    logs = "".join(captured) + caplog.text
    assert "single-shot pipeline failed" in logs  # the log capture works
    for secret in (ITEMS_SECRET, TEST_API_KEY):
        assert secret not in llm_traffic
        assert all(secret not in body for body in bodies)
        assert secret not in logs
    # The LLM key is only ever sent as the endpoint's bearer credential.
    assert fake_llm.headers[0]["authorization"] == f"Bearer {TEST_API_KEY}"


@pytest.mark.parametrize(
    "error",
    [
        UnicodeEncodeError("ascii", "café", 3, 4, "ordinal not in range(128)"),
        ValueError(f"Invalid port: '1:2' key={ITEMS_SECRET}"),
        httpx.InvalidURL("Invalid IPv4 address: '0177.0.0.1'"),
        OSError(99, "Cannot assign requested address"),
        ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"),
        h11.LocalProtocolError("Illegal header value b'caf\\xc3\\xa9'"),
        type("ExoticTransportError", (Exception,), {})(f"with {ITEMS_SECRET}"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_any_exception_while_sending_is_an_api_execution_error(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder, error: Exception
) -> None:
    def raising(request: httpx.Request) -> httpx.Response:
        raise error

    recorder.responder = raising
    fake_llm.script(tool_call("get_item", {"item_id": "42", "X-Trace": None, "fields": None}))
    data = await run(client)
    assert data["status"] == "error" and data["error_stage"] == "api_execution", data
    assert data["error"].startswith("GET https://items.example/v1/items/42 ")
    assert type(error).__name__ in data["error"]
    assert ITEMS_SECRET not in json.dumps(data)


ITEMS = {
    "items": [{"id": "1", "name": "Lamp", "price": 30}, {"id": "2", "name": "Desk", "price": 90}]
}


async def test_sql_post_processes_the_answer_and_says_what_ran(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    recorder.responder = lambda r: httpx.Response(200, json=ITEMS)
    fake_llm.script(tool_call("get_item", {"item_id": "42"}), text("The desk."))
    sql = "SELECT name FROM result WHERE price > 50 ORDER BY price DESC"
    data = await run(client, sql=sql, format_response=True)
    assert data["status"] == "success", data
    assert data["sql"] == {"query": sql, "table_rows": 2, "rows": [{"name": "Desk"}]}
    assert "result_sql" in data["timings_ms"]
    format_prompt = json.dumps(fake_llm.requests[1])
    assert "Desk" in format_prompt and "Lamp" not in format_prompt  # formatting reads the rows


async def test_sql_that_writes_or_fails_is_the_result_sql_stage(
    client: httpx.AsyncClient, fake_llm: FakeLLM, recorder: Recorder
) -> None:
    recorder.responder = lambda r: httpx.Response(200, json=ITEMS)
    fake_llm.script(
        tool_call("get_item", {"item_id": "42"}), tool_call("get_item", {"item_id": "7"})
    )
    writes = await run(client, sql="DELETE FROM result")
    unknown = await run(client, sql="SELECT nope FROM result")
    assert (writes["status"], writes["error_stage"]) == ("error", "result_sql")
    assert "SELECT" in writes["error"]
    assert (unknown["status"], unknown["error_stage"]) == ("error", "result_sql")
    assert "nope" in unknown["error"]
    assert writes["raw_response"]["body"] == ITEMS  # the answer is still shown
