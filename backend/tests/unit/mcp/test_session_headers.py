"""Session headers are checked before anything is fetched: every problem names its header."""

from __future__ import annotations

import json

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.session_config import parse_session_headers


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
