import httpx
import pytest
from pytest_httpx import HTTPXMock

from dynamic_tools.errors import TargetRefusedError, TransportError
from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.http.target_guard import TargetGuard

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
    assert result.truncated and len(result.body) == 64


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
