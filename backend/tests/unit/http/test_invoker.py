"""The ToolInvoker: one way to call a tool (cached validator, build, guard, send, violations)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dynamic_tools.errors import ConfigurationError, InvalidInputError, TargetRefusedError
from dynamic_tools.http.invoker import ArgumentsRejected, ToolInvoker
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.violations import Violation

ITEM = {
    "name": "get_item",
    "description": "Get an item",
    "api": {"method": "GET", "base_url": "https://items.example", "path": "/items/{id}"},
    "parameters": {
        "id": {"type": "string", "in": "path", "required": True},
        "limit": {"type": "integer", "in": "query"},
    },
}
SECURED = {**ITEM, "name": "secured", "auth": {"type": "bearer", "secret": "secret:ITEMS_TOKEN"}}


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={"id": request.url.path.rsplit("/", 1)[-1]})


def invoker(hosts: list[str] | None = None) -> tuple[ToolInvoker, Recorder]:
    transport = Recorder()
    guard = TargetGuard(["items.example"] if hosts is None else hosts)
    sender = HttpSender(httpx.AsyncClient(transport=transport), guard, max_response_bytes=4096)
    return ToolInvoker(sender, lambda name: None), transport


def test_a_tools_validator_is_compiled_once_and_again_after_the_tool_changes() -> None:
    tools, _ = invoker()
    tool = ToolConfig.model_validate(ITEM)
    for _ in range(3):
        assert tools.violations(tool, {"id": "1"}) == []
    assert tools.validators.compiled == 1
    edited = ToolConfig.model_validate({**ITEM, "description": "Get one item"})
    tools.violations(edited, {"id": "1"})
    assert tools.validators.compiled == 2


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, [Violation("(arguments)", "required", "'id' is a required property")]),
        ({"id": 3}, [Violation("id", "type", "3 is not of type 'string'")]),
        (
            {"id": "1", "limit": "ten", "extra": 1},
            [
                Violation(
                    "(arguments)",
                    "additionalProperties",
                    "Additional properties are not allowed ('extra' was unexpected)",
                ),
                Violation("limit", "type", "'ten' is not of type 'integer'"),
            ],
        ),
    ],
)
def test_schema_errors_map_to_one_violation_each(
    arguments: dict[str, Any], expected: list[Violation]
) -> None:
    tools, _ = invoker()
    assert tools.violations(ToolConfig.model_validate(ITEM), arguments) == expected


async def test_rejected_arguments_send_nothing_and_name_each_field() -> None:
    tools, transport = invoker()
    with pytest.raises(ArgumentsRejected) as rejected:
        await tools.invoke(ToolConfig.model_validate(ITEM), {"id": 3, "limit": "x"})
    assert isinstance(rejected.value, InvalidInputError)
    assert [v["path"] for v in rejected.value.violations] == ["id", "limit"]
    assert rejected.value.message.startswith(
        "the arguments of 'get_item' do not match its input schema: id: "
    )
    assert transport.requests == []


async def test_a_valid_call_is_built_and_sent_with_the_extra_headers() -> None:
    tools, transport = invoker()
    result = await tools.invoke(
        ToolConfig.model_validate(ITEM),
        {"id": "7"},
        extra_headers={"X-Team": "blue", "Idempotency-Key": "forged"},
        idempotency_key="r:n",
    )
    assert result.status_code == 200 and result.body == {"id": "7"}
    (request,) = transport.requests
    assert str(request.url) == "https://items.example/items/7"
    assert request.headers["X-Team"] == "blue"
    assert request.headers.get_list("Idempotency-Key") == ["r:n"]  # the engine's, not added


async def test_the_guard_refuses_a_host_outside_the_allow_list() -> None:
    tools, transport = invoker(hosts=["elsewhere.example"])
    with pytest.raises(TargetRefusedError):
        await tools.invoke(ToolConfig.model_validate(ITEM), {"id": "7"})
    assert transport.requests == []


async def test_a_missing_secret_is_a_configuration_error_that_names_no_value() -> None:
    tools, transport = invoker()
    with pytest.raises(ConfigurationError) as missing:
        await tools.invoke(ToolConfig.model_validate(SECURED), {"id": "7"})
    assert "ITEMS_TOKEN" in missing.value.message and transport.requests == []


def test_the_server_has_one_invoker_for_every_caller(tmp_path: Any) -> None:
    from dynamic_tools.bootstrap import build_services
    from dynamic_tools.settings import Settings

    settings = Settings(
        registry_config_path=tmp_path / "registry" / "config.yaml",
        data_dir=tmp_path / "data",
        durable_runs=False,
    )
    services = build_services(settings)
    assert services.pipeline.invoker is services.invoker
    runner: Any = services.tool_runner
    assert getattr(runner, "runner", runner).invoker is services.invoker
