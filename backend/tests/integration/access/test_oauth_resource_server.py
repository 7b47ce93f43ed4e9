"""The server as an OAuth 2.1 resource server, against a real authorization server on loopback
(``tests/support/oauth_server.py``): the ``mcp`` SDK client's whole OAuth flow in both protocol
modes, REST with access tokens, and every refusal — another audience, expired, a rotated key,
a missing scope, a symmetric or unsigned token, an opaque token by introspection."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import jwt
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.mcp_client import LEGACY, MODERN
from tests.support.mcp_raw import RawMcp
from tests.support.oauth_server import (
    RESOURCE_SERVER,
    AuthorizationServer,
    BrowserStandIn,
    MemoryTokenStorage,
    oauth_mcp_client,
    running_authorization_server,
)
from tests.support.servers import free_port, serve

PRM = "/.well-known/oauth-protected-resource"


@pytest.fixture
def issuer() -> Iterator[AuthorizationServer]:
    with running_authorization_server() as server:
        yield server


@pytest.fixture
def start(
    make_settings: Callable[..., Settings], issuer: AuthorizationServer
) -> Iterator[Callable[..., str]]:
    """Start our server trusting ``issuer`` (settings overridable); returns its base URL."""
    stack: list[Any] = []

    def start(**overrides: Any) -> str:
        values: dict[str, Any] = {
            "oauth_issuer": issuer.issuer,
            "allowed_target_hosts": [f"127.0.0.1:{issuer.port}"],
        }
        values.update(overrides)
        settings = make_settings(**values)
        context = serve(create_app(settings), port=settings.port)
        stack.append(context)
        return context.__enter__()

    yield start
    for context in reversed(stack):
        context.__exit__(None, None, None)


@pytest.fixture
def server(start: Callable[..., str]) -> str:
    return start()


def challenge(answer: httpx.Response) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer ...`` header."""
    header = answer.headers["www-authenticate"]
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', header))


async def get_me(url: str, token: str) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.get(f"{url}/me", headers={"Authorization": f"Bearer {token}"})


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_the_sdk_client_authorizes_itself_and_calls_tools(
    server: str, issuer: AuthorizationServer, mode: str
) -> None:
    browser, storage = BrowserStandIn(), MemoryTokenStorage()
    async with oauth_mcp_client(server, browser, storage, mode=mode) as client:
        listed = await client.list_tools()
        called = await client.call_tool("workflow.list", {})
    assert "search_flights" in {t.name for t in listed.tools}
    assert not called.is_error, called.content
    # discovery → registration → authorization (once) → token for this server's MCP endpoint
    assert browser.visits == 1 and len(issuer.clients) == 1
    assert storage.tokens is not None
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == f"{server}/mcp"
    assert set(claims["scope"].split()) == {"read", "run", "author", "admin"}


async def test_the_protected_resource_metadata_names_the_issuer(
    server: str, issuer: AuthorizationServer
) -> None:
    async with httpx.AsyncClient() as http:
        refused_rest = await http.get(f"{server}/runs")
        refused_mcp = await http.post(
            f"{server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
        rest = await http.get(challenge(refused_rest)["resource_metadata"])
        mcp = await http.get(challenge(refused_mcp)["resource_metadata"])
    assert refused_rest.status_code == refused_mcp.status_code == 401
    assert "error" not in challenge(refused_rest)  # no credential given: no error code
    assert str(rest.url) == f"{server}{PRM}" and str(mcp.url) == f"{server}{PRM}/mcp"
    assert rest.json() == {
        "resource": server,
        "authorization_servers": [issuer.issuer],
        "scopes_supported": ["read", "run", "author", "admin"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Dynamic Tools API",
    }
    assert mcp.json()["resource"] == f"{server}/mcp"
    assert mcp.json()["authorization_servers"] == [issuer.issuer]


async def test_rest_takes_an_access_token_for_this_server(
    server: str, issuer: AuthorizationServer
) -> None:
    for audience in (server, f"{server}/mcp", ["https://other.example", server]):
        answer = await get_me(server, issuer.mint(audience=audience, scopes=["read", "run"]))
        assert answer.status_code == 200, answer.text
        assert answer.json() == {
            "id": "oauth:user-7",
            "name": "Ada Lovelace",
            "kind": "oauth",
            "scopes": ["read", "run"],
            "access_control": True,
        }


async def test_a_token_for_another_resource_is_refused(
    server: str, issuer: AuthorizationServer
) -> None:
    token = issuer.mint(audience="https://another-resource.example/mcp", scopes=["admin"])
    answer = await get_me(server, token)
    async with httpx.AsyncClient() as http:
        over_mcp = await http.post(
            f"{server}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Authorization": f"Bearer {token}"},
        )
    for refused in (answer, over_mcp):
        assert refused.status_code == 401
        assert refused.json()["error_code"] == "unauthorized"
        assert "another resource" in refused.json()["message"]
        assert challenge(refused)["error"] == "invalid_token"
        assert token not in refused.text and token not in refused.headers["www-authenticate"]
    assert challenge(over_mcp)["resource_metadata"] == f"{server}{PRM}/mcp"
    assert challenge(answer)["resource_metadata"] == f"{server}{PRM}"


async def test_an_expired_token_is_refused(server: str, issuer: AuthorizationServer) -> None:
    answer = await get_me(server, issuer.mint(audience=server, scopes=["read"], expires_in=-120))
    assert answer.status_code == 401
    assert "expired" in answer.json()["message"]
    assert challenge(answer)["error"] == "invalid_token"


async def test_a_rotated_signing_key_is_picked_up_and_the_old_one_dropped(
    server: str, issuer: AuthorizationServer
) -> None:
    before = issuer.mint(audience=server, scopes=["read"])
    assert (await get_me(server, before)).status_code == 200
    assert issuer.jwks_reads == 1
    old = issuer.rotate()
    after = issuer.mint(audience=server, scopes=["read"])
    assert (await get_me(server, after)).status_code == 200  # an unknown kid: keys read again
    assert issuer.jwks_reads == 2
    refused = await get_me(server, before)
    assert refused.status_code == 401
    assert f"does not publish (kid '{old.kid}')" in refused.json()["message"]
    # made-up key ids do not make the server ask the issuer again and again
    for _ in range(3):
        forged = issuer.mint(audience=server, scopes=["read"], key=old)
        assert (await get_me(server, forged)).status_code == 401
    assert issuer.jwks_reads == 2


async def test_a_missing_scope_is_403_with_the_scope_named(
    server: str, issuer: AuthorizationServer
) -> None:
    token = issuer.mint(audience=server, scopes=["read", "openid", "offline_access"])
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        allowed = await http.get(f"{server}/workflows")
        refused = await http.post(f"{server}/tools/_reload")
        none = await http.post(
            f"{server}/tools/_reload",
            headers={"Authorization": "Bearer " + issuer.mint(audience=server, scopes=[])},
        )
    assert allowed.status_code == 200
    for answer in (refused, none):
        assert answer.status_code == 403
        assert answer.json()["error_code"] == "insufficient_scope"
        assert challenge(answer)["error"] == "insufficient_scope"
        assert challenge(answer)["scope"] == "author"
        assert challenge(answer)["resource_metadata"] == f"{server}{PRM}"


async def test_unsigned_and_shared_secret_tokens_are_refused(
    server: str, issuer: AuthorizationServer
) -> None:
    claims = {
        "iss": issuer.issuer,
        "sub": "mallory",
        "aud": server,
        "exp": int(time.time()) + 600,
        "scope": "admin",
    }
    shared = jwt.encode(claims, "a-secret-both-sides-know-" + "x" * 16, algorithm="HS256")
    unsigned = jwt.encode(claims, None, algorithm="none")
    for token, algorithm in ((shared, "HS256"), (unsigned, "none")):
        answer = await get_me(server, token)
        assert answer.status_code == 401
        assert f"signed with '{algorithm}'" in answer.json()["message"]
    tampered = issuer.mint(audience=server, scopes=["read"])
    head, body, signature = tampered.split(".")
    forged_body = jwt.utils.base64url_encode(
        jwt.utils.base64url_decode(body).replace(b'"read"', b'"admin"')
    ).decode()
    answer = await get_me(server, f"{head}.{forged_body}.{signature}")
    assert answer.status_code == 401
    assert "signature does not verify" in answer.json()["message"]


async def test_an_opaque_token_is_introspected(
    start: Callable[..., str], issuer: AuthorizationServer
) -> None:
    client_id, secret = RESOURCE_SERVER
    server = start(oauth_client_id=client_id, oauth_client_secret=secret)
    token = issuer.issue_opaque(audience=f"{server}/mcp", scopes=["read", "run"])
    first, again = await get_me(server, token), await get_me(server, token)
    assert first.status_code == again.status_code == 200
    assert first.json()["id"] == "oauth:user-7" and first.json()["scopes"] == ["read", "run"]
    assert issuer.introspections == 1  # the answer is kept a few seconds
    unknown = await get_me(server, "opq_never-issued-by-anyone")
    elsewhere = await get_me(
        server, issuer.issue_opaque(audience="https://another.example", scopes=["run"])
    )
    jwt_still = await get_me(server, issuer.mint(audience=server, scopes=["read"]))
    assert unknown.status_code == elsewhere.status_code == 401
    assert "not active" in unknown.json()["message"]
    assert "another resource" in elsewhere.json()["message"]
    assert jwt_still.status_code == 200


async def test_wrong_introspection_credentials_are_a_configuration_error(
    start: Callable[..., str], issuer: AuthorizationServer
) -> None:
    server = start(oauth_client_id="dynamic-tools", oauth_client_secret="not-the-secret")
    answer = await get_me(server, issuer.issue_opaque(audience=server, scopes=["run"]))
    assert answer.status_code == 503
    assert answer.json()["error_code"] == "not_configured"
    assert "OAUTH_CLIENT_ID" in answer.json()["message"]
    assert "not-the-secret" not in answer.text


async def test_an_issuer_the_guard_refuses_is_named_with_the_setting(
    start: Callable[..., str], issuer: AuthorizationServer
) -> None:
    server = start(allowed_target_hosts=[])  # the issuer is on loopback: not allowed
    answer = await get_me(server, issuer.mint(audience=server, scopes=["read"]))
    assert answer.status_code == 503
    assert answer.json()["error_code"] == "not_configured"
    assert "ALLOWED_TARGET_HOSTS" in answer.json()["message"]


async def test_the_issuer_must_be_the_one_its_metadata_names(
    start: Callable[..., str], issuer: AuthorizationServer
) -> None:
    server = start(
        oauth_issuer=f"http://localhost:{issuer.port}",
        allowed_target_hosts=[f"localhost:{issuer.port}", f"127.0.0.1:{issuer.port}"],
    )
    answer = await get_me(server, issuer.mint(audience=server, scopes=["read"]))
    assert answer.status_code == 503
    assert "RFC 8414" in answer.json()["message"]


async def test_without_an_issuer_the_metadata_is_not_found(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(create_app(make_settings(api_token="tok-5b1d07"))) as api:
        answers = [await api.get(PRM), await api.get(f"{PRM}/mcp")]
        refused = await api.get("/runs")
    for answer in answers:
        assert answer.status_code == 404
        assert answer.json()["error_code"] == "not_found"
        assert answer.json()["context"] == {"setting": "OAUTH_ISSUER"}
    assert challenge(refused)["resource_metadata"] == f"http://testserver{PRM}"


async def test_an_issuer_that_cannot_be_reached_is_502(
    start: Callable[..., str], issuer: AuthorizationServer
) -> None:
    gone = free_port()  # nothing listens there
    server = start(
        oauth_issuer=f"http://127.0.0.1:{gone}", allowed_target_hosts=[f"127.0.0.1:{gone}"]
    )
    answer = await get_me(server, issuer.mint(audience=server, scopes=["read"]))
    assert answer.status_code == 502
    assert answer.json()["error_code"] == "transport_error" and answer.json()["retryable"]


async def test_behind_a_proxy_the_challenge_points_at_the_public_url(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_token="tok-5b1d07", public_base_url="https://tools.example.com")
    async with app_client(create_app(settings)) as api:
        refused = await api.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
    assert challenge(refused)["resource_metadata"] == f"https://tools.example.com{PRM}/mcp"


async def test_a_missing_scope_on_mcp_is_403_with_the_challenge_for_mcp(
    server: str, issuer: AuthorizationServer
) -> None:
    token = issuer.mint(audience=f"{server}/mcp", scopes=["read"])
    async with RawMcp(server, headers={"Authorization": f"Bearer {token}"}) as raw:
        listed = {t["name"] for t in (await raw.request("tools/list"))["result"]["tools"]}
        refused = await raw.request(
            "tools/call", {"name": "search_flights", "arguments": {"origin": "AMS"}}
        )
        answer = raw.last_response
        read = await raw.request("tools/call", {"name": "workflow.list", "arguments": {}})
    assert answer is not None and answer.status_code == 403
    assert challenge(answer)["error"] == "insufficient_scope"
    assert challenge(answer)["scope"] == "run"
    assert challenge(answer)["resource_metadata"] == f"{server}{PRM}/mcp"
    assert refused["error"]["data"]["context"]["scope"] == "run"
    assert "search_flights" not in listed and "workflow.list" in listed
    assert read["result"]["isError"] is False
