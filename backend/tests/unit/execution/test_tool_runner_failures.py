"""HttpToolRunner: whatever goes wrong is a ToolCallFailed of the right kind, never a crash."""

from __future__ import annotations

import shutil
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynamic_tools.engine.ports import ToolCallFailed
from dynamic_tools.execution.tool_runner import HttpToolRunner
from dynamic_tools.http.invoker import ToolInvoker
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import FIXTURES
from tests.support.http_exceptions import http_stack_exceptions

SECRET = "items-secret-4471"


class RaisingTransport(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.error: Exception | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.error is not None:
            raise self.error
        return httpx.Response(200, json={"id": "1"})


TRANSPORT = RaisingTransport()


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> HttpToolRunner:
    tools = tmp_path_factory.mktemp("registry") / "tools"
    shutil.copytree(FIXTURES / "tools" / "pipeline", tools)
    (tools / "unsafe_targets.yaml").unlink()
    registry = ToolRegistry(tools)
    assert not registry.reload()
    guard = TargetGuard(["items.example", "127.0.0.1", "0177.0.0.1", "host"])
    sender = HttpSender(httpx.AsyncClient(transport=TRANSPORT), guard, max_response_bytes=4096)
    return HttpToolRunner(registry, ToolInvoker(sender, lambda name: SECRET))


async def call(runner: HttpToolRunner, tool: str, args: dict[str, Any]) -> ToolCallFailed:
    with pytest.raises(ToolCallFailed) as info:
        await runner.call(tool, args, idempotency_key="run:node", timeout_s=None)
    assert SECRET not in info.value.message
    return info.value


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(error=http_stack_exceptions(st.sampled_from(["", "x", f"api_key={SECRET}"])))
async def test_every_exception_of_the_http_stack_is_a_tool_call_failure(
    runner: HttpToolRunner, error: Exception
) -> None:
    TRANSPORT.error = error
    try:
        failure = await call(runner, "get_item", {"item_id": "1"})
    finally:
        TRANSPORT.error = None
    assert failure.kind in ("transport", "timeout", "error")
    assert failure.message.startswith("GET https://items.example/v1/items/1 ")
    if isinstance(error, httpx.TimeoutException | TimeoutError):
        assert failure.kind == "timeout"


async def test_a_header_value_http_cannot_carry_is_refused_naming_the_header(
    runner: HttpToolRunner,
) -> None:
    failure = await call(runner, "get_item", {"item_id": "1", "X-Trace": "café"})
    assert failure.kind == "refused" and "X-Trace" in failure.message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"base_url": "http://0177.0.0.1:8000"}, "base_url"),
        ({"base_url": "http://host:1:2"}, "base_url"),
        ({"base_url": "http://bob:pw@127.0.0.1:8000"}, "credentials"),
        ({"headers": {"X-Note": "café"}}, "headers"),
        ({"headers": {"Authorization": "Bearer abc"}}, "credential"),
        ({"headers": {"Host": "admin.internal"}}, "rest_call header 'Host' may not be set"),
        ({"headers": {"x-forwarded-for": "10.0.0.1"}}, "'x-forwarded-for' may not be set"),
        ({"headers": {"Transfer-Encoding": "chunked"}}, "'Transfer-Encoding' may not be set"),
        ({"query": {"api_key": "abc"}}, "credential"),
        ({"headers": "not an object"}, "headers must be an object"),
        ({"path": 7}, "path"),
    ],
)
async def test_a_rest_call_that_cannot_be_made_is_refused(
    runner: HttpToolRunner, args: dict[str, Any], expected: str
) -> None:
    failure = await call(
        runner,
        "rest_call",
        {"method": "GET", "path": "/x", "base_url": "http://127.0.0.1:8000", **args},
    )
    assert failure.kind == "refused" and expected in failure.message


async def test_a_rest_call_sends_run_values_but_never_a_credential_header(
    runner: HttpToolRunner,
) -> None:
    """A rest_call's headers and body are the run's values ($references rendered): the document's
    literals were checked at validation, so a value from a param is sent; a header named like a
    credential is still refused, naming it."""
    run_value = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl"
    args = {"method": "POST", "path": "/login", "base_url": "http://127.0.0.1:8000"}
    sent = await runner.call(
        "rest_call",
        {**args, "headers": {"X-Custom": run_value}, "body": {"password": "from-a-param"}},
        idempotency_key="run:node",
        timeout_s=None,
    )
    assert sent.status_code == 200
    failure = await call(runner, "rest_call", {**args, "headers": {"Authorization": run_value}})
    assert failure.kind == "refused"
    assert "headers.Authorization: 'Authorization' looks like a credential" in failure.message
    assert run_value not in failure.message
