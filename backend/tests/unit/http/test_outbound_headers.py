"""Headers a caller adds never replace the tool's credential, never travel twice, and never
change how the request travels or who it claims to be; the engine's key always goes."""

from __future__ import annotations

import httpx
import pytest
from pytest_httpx import HTTPXMock

from dynamic_tools.http.outbound_headers import outbound_headers, refused_reason
from dynamic_tools.http.request_builder import PreparedRequest, build_request
from dynamic_tools.http.sender import USER_AGENT, HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.tools.models import ToolConfig

TOOL_SECRET = "tool-secret-2f81aa"


def tool(auth: dict[str, str]) -> ToolConfig:
    return ToolConfig.model_validate(
        {
            "name": "get_rates",
            "description": "Rates",
            "api": {"method": "GET", "base_url": "https://api.example", "path": "/rates"},
            "parameters": {"Accept-Language": {"type": "string", "in": "header"}},
            "auth": auth,
        }
    )


def bearer_request(**arguments: str) -> PreparedRequest:
    config = tool({"type": "bearer", "secret": "secret:RATES"})
    return build_request(config, dict(arguments), secret=lambda _: TOOL_SECRET)


def test_the_tool_credential_wins_whatever_the_case() -> None:
    for name in ("Authorization", "authorization", "AUTHORIZATION"):
        headers = outbound_headers(
            bearer_request(), {name: "Bearer session"}, user_agent=USER_AGENT
        )
        assert [k for k in headers if k.lower() == "authorization"] == ["Authorization"]
        assert headers["Authorization"] == f"Bearer {TOOL_SECRET}"


def test_an_api_key_header_set_by_auth_wins_too() -> None:
    config = tool({"type": "api_key", "in": "header", "name": "X-API-Key", "secret": "secret:K"})
    request = build_request(config, {}, secret=lambda _: TOOL_SECRET)
    headers = outbound_headers(request, {"x-api-key": "forged"}, user_agent=USER_AGENT)
    assert headers == {"User-Agent": USER_AGENT, "X-API-Key": TOOL_SECRET}


def test_other_added_headers_replace_the_request_s_own_once() -> None:
    request = bearer_request(**{"Accept-Language": "nl"})
    headers = outbound_headers(
        request, {"accept-language": "en", "X-Team": "blue"}, user_agent=USER_AGENT
    )
    assert headers == {
        "User-Agent": USER_AGENT,
        "accept-language": "en",
        "Authorization": f"Bearer {TOOL_SECRET}",
        "X-Team": "blue",
    }


@pytest.mark.parametrize(
    "name",
    [
        "Host",
        "Content-Length",
        "transfer-encoding",
        "Connection",
        "Upgrade",
        "Proxy-Authorization",
        "Forwarded",
        "X-Forwarded-For",
        "X-Forwarded-Proto",
        "Idempotency-Key",
        "traceparent",
    ],
)
def test_transport_and_identity_headers_are_never_added(name: str) -> None:
    assert refused_reason(name) is not None
    headers = outbound_headers(bearer_request(), {name: "forged"}, user_agent=USER_AGENT)
    assert "forged" not in headers.values()


def test_the_engine_key_travels_on_the_request_not_in_added_headers() -> None:
    request = PreparedRequest(
        tool="t", method="POST", url="https://api.example/x", idempotency_key="run-1:book"
    )
    headers = outbound_headers(request, {"idempotency-key": "forged"}, user_agent=USER_AGENT)
    assert headers == {"User-Agent": USER_AGENT, "Idempotency-Key": "run-1:book"}


def test_names_a_session_may_set() -> None:
    for name in ("Authorization", "Cookie", "X-Team", "Accept", "User-Agent", "X-Forwarded"):
        assert refused_reason(name) is None, name


async def test_what_the_sender_puts_on_the_wire(httpx_mock: HTTPXMock) -> None:
    httpx_mock.add_response(json={"ok": True})
    sender = HttpSender(httpx.AsyncClient(), TargetGuard(["api.example"]), max_response_bytes=64)
    extra = {
        "authorization": "Bearer session",
        "Host": "admin.internal",
        "Transfer-Encoding": "chunked",
        "X-Forwarded-For": "10.0.0.1",
        "Idempotency-Key": "forged",
        "X-Team": "blue",
    }
    await sender.send(bearer_request(), extra_headers=extra)
    sent = httpx_mock.get_requests()[0]
    names = [name.lower() for name, _ in sent.headers.multi_items()]
    assert len(names) == len(set(names))  # nothing twice
    assert sent.headers["authorization"] == f"Bearer {TOOL_SECRET}"
    assert sent.headers["host"] == "api.example"
    assert sent.headers["x-team"] == "blue"
    for name in ("transfer-encoding", "x-forwarded-for", "idempotency-key"):
        assert name not in sent.headers, name
