import json
from collections.abc import AsyncIterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpx import HTTPXMock

from dynamic_tools.errors import (
    OutboundError,
    RequestNotSendableError,
    TargetRefusedError,
    TransportError,
)
from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard
from tests.support.http_exceptions import http_stack_exceptions

SECRET = "query-secret-7731"


def request(url: str = "https://api.example/v1/items") -> PreparedRequest:
    return PreparedRequest(
        tool="t",
        method="GET",
        url=url,
        query=[("key", SECRET)],
        secret_query=frozenset({"key"}),
        secret_values=(SECRET,),
    )


@pytest.fixture
def sender() -> HttpSender:
    return HttpSender(httpx.AsyncClient(), TargetGuard(["api.example"]), max_response_bytes=64)


async def test_a_redirect_is_returned_not_followed(
    httpx_mock: HTTPXMock, sender: HttpSender
) -> None:
    httpx_mock.add_response(
        status_code=302, headers={"Location": "http://169.254.169.254/latest/meta-data"}
    )
    result = await sender.send(request())
    assert result.status_code == 302
    assert len(httpx_mock.get_requests()) == 1


async def test_json_bodies_are_decoded_and_big_bodies_truncated(
    httpx_mock: HTTPXMock, sender: HttpSender
) -> None:
    httpx_mock.add_response(json={"ok": True})
    assert (await sender.send(request())).body == {"ok": True}
    httpx_mock.add_response(text="x" * 500)
    result = await sender.send(request())
    # the budget is measured on the stored (JSON) form: 62 characters and their quotes
    assert result.truncated and len(json.dumps(result.body)) == 64


async def test_transport_errors_never_show_the_query_secret(
    httpx_mock: HTTPXMock, sender: HttpSender
) -> None:
    httpx_mock.add_exception(httpx.ConnectError(f"failed for https://api.example/?key={SECRET}"))
    with pytest.raises(TransportError) as info:
        await sender.send(request())
    assert SECRET not in info.value.message and SECRET not in str(info.value.context)
    httpx_mock.add_exception(httpx.ReadTimeout("slow"))
    with pytest.raises(TransportError) as info:
        await sender.send(request())
    assert "timed out" in info.value.message


async def test_unlisted_private_targets_are_refused_before_sending(sender: HttpSender) -> None:
    with pytest.raises(TargetRefusedError):
        await sender.send(request("http://169.254.169.254/latest"))


class RaisingTransport(httpx.AsyncBaseTransport):
    """Raises ``error`` when sending, or while the answer's body is read."""

    def __init__(self, error: Exception, *, while_reading: bool) -> None:
        self.error = error
        self.while_reading = while_reading

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self.while_reading:
            raise self.error
        error = self.error

        class Body(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                yield b'{"partial": '
                raise error

        return httpx.Response(200, stream=Body(), headers={"content-type": "application/json"})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    error=http_stack_exceptions(st.sampled_from(["", "boom", f"key={SECRET}"])),
    while_reading=st.booleans(),
)
async def test_every_exception_of_the_http_stack_becomes_a_structured_error(
    error: Exception, while_reading: bool
) -> None:
    client = httpx.AsyncClient(transport=RaisingTransport(error, while_reading=while_reading))
    sender = HttpSender(client, TargetGuard(["api.example"]), max_response_bytes=1024)
    with pytest.raises(OutboundError) as info:
        await sender.send(request())
    failure = info.value
    assert SECRET not in failure.message and SECRET not in str(failure.context)
    assert failure.message.startswith("GET https://api.example/v1/items ")
    assert failure.context["tool"] == "t"
    assert failure.retryable == isinstance(failure, TransportError)
    if isinstance(error, httpx.TimeoutException | TimeoutError):
        assert isinstance(failure, TransportError) and failure.timed_out
    if isinstance(error, UnicodeEncodeError | httpx.InvalidURL):
        assert isinstance(failure, RequestNotSendableError)
    if isinstance(error, OSError | httpx.NetworkError):
        assert isinstance(failure, TransportError)


@pytest.mark.parametrize(
    ("url", "headers", "expected"),
    [
        ("http://127.0.0.1:9/x", {"X-Note": "café"}, "UnicodeEncodeError"),
        ("http://0177.0.0.1:9/x", {}, "Invalid IPv4 address"),
        ("http://host:1:2/x", {}, "Invalid port"),
    ],
)
async def test_requests_http_cannot_carry_are_refused_not_crashed(
    url: str, headers: dict[str, str], expected: str
) -> None:
    client = httpx.AsyncClient()
    sender = HttpSender(
        client, TargetGuard(["127.0.0.1", "0177.0.0.1", "host"]), max_response_bytes=64
    )
    with pytest.raises(RequestNotSendableError) as info:
        await sender.send(PreparedRequest(tool="t", method="GET", url=url, headers=headers))
    assert expected in info.value.message and not info.value.retryable
    await client.aclose()
