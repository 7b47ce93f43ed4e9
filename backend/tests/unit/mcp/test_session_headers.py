"""Session headers are checked before anything is fetched: every problem names its header."""

from __future__ import annotations

import json

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.session_config import SessionConfig, parse_session_headers


def problems(**headers: str) -> dict[str, str]:
    with pytest.raises(InvalidInputError) as refused:
        parse_session_headers({k.replace("_", "-"): v for k, v in headers.items()})
    return {v["path"]: v["message"] for v in refused.value.violations}


def test_graphql_sessions_and_their_headers() -> None:
    config = parse_session_headers(
        {
            "x-target-url": "https://flights.example.com/graphql",
            "x-api-type": "GraphQL",
            "x-schema-url": "https://team.example.com/schema.graphql",
            "x-allow-unsafe-paths": '["createBooking", "/bookings*"]',
        }
    )
    assert (config.api_type, config.schema_url) == (
        "graphql",
        "https://team.example.com/schema.graphql",
    )
    assert config.allow_unsafe == ("createBooking", "/bookings*")
    comma = parse_session_headers({"x-allow-unsafe-paths": "create_booking, /payments"})
    assert comma.allow_unsafe == ("create_booking", "/payments")


def test_each_problem_names_its_header() -> None:
    assert "header:x-target-url" in problems(x_api_type="graphql")
    assert "header:x-api-type" in problems(x_api_type="soap", x_target_url="https://x.example")
    assert "header:x-schema-url" in problems(x_schema_url="https://x.example/s.graphql")
    assert "header:x-schema-url" in problems(
        x_api_type="graphql", x_target_url="https://x.example/g", x_schema_url="ftp://x"
    )
    for bad in ("[1, 2]", "[", '["a", ""]', ",", json.dumps(["p"] * 101)):
        assert "header:x-allow-unsafe-paths" in problems(x_allow_unsafe_paths=bad), bad


TARGET = "https://notes.example.com/openapi.json"


@pytest.mark.parametrize(
    "name",
    [
        "Host",
        "content-length",
        "Transfer-Encoding",
        "CONNECTION",
        "Keep-Alive",
        "TE",
        "Trailer",
        "Upgrade",
        "Expect",
        "Proxy-Authorization",
        "proxy-connection",
        "Forwarded",
        "Via",
        "X-Forwarded-For",
        "x-forwarded-host",
        "X-Real-IP",
        "Idempotency-Key",
        "traceparent",
        "X-HTTP-Method-Override",
        "X-Original-URL",
    ],
)
def test_a_header_changing_transport_or_identity_is_refused_by_name(name: str) -> None:
    found = problems(
        x_target_url=TARGET, x_target_headers=json.dumps({"Authorization": "Bearer t", name: "x"})
    )
    assert list(found) == [f"header:x-target-headers.{name}"]
    assert found[f"header:x-target-headers.{name}"].startswith(
        f"X-Target-Headers may not set '{name}': it "
    )


def test_credentials_and_cookies_are_the_session_api_s_headers() -> None:
    headers = {"Authorization": "Bearer t", "Cookie": "sid=1", "X-Team": "blue"}
    config = parse_session_headers(
        {"x-target-url": TARGET, "x-target-headers": json.dumps(headers)}
    )
    assert config.api_headers == headers


def test_session_headers_need_a_session_api() -> None:
    found = problems(x_target_headers=json.dumps({"Authorization": "Bearer t"}))
    assert list(found) == ["header:x-target-headers"]
    assert "needs X-Target-URL" in found["header:x-target-headers"]
    assert "server's credentials" in found["header:x-target-headers"]


def test_a_session_without_its_own_api_sends_no_headers() -> None:
    # However the config was made (a session parsed before the rule, a test): the registry's
    # tools are never given the session's headers.
    config = SessionConfig(target_headers={"Authorization": "Bearer t"})
    assert config.api_headers == {}
