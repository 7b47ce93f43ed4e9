"""A JSON response nested past what can be shown is kept as text, not a RecursionError."""

import httpx
from pytest_httpx import HTTPXMock

from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.http.sender import MAX_RESPONSE_DEPTH, HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from tests.support.hostile import nested_json


async def test_a_deeply_nested_json_response_is_kept_as_text(httpx_mock: HTTPXMock) -> None:
    sender = HttpSender(
        httpx.AsyncClient(), TargetGuard(["api.example"]), max_response_bytes=1_000_000
    )
    request = PreparedRequest(tool="t", method="GET", url="https://api.example/v1/deep")
    for depth in (10_000, MAX_RESPONSE_DEPTH + 1):
        body = nested_json(depth)
        httpx_mock.add_response(text=body, headers={"content-type": "application/json"})
        result = await sender.send(request)
        assert result.body == body
    httpx_mock.add_response(json=[[1]])
    assert (await sender.send(request)).body == [[1]]
