"""A real OAuth 2.1 authorization server on loopback, for the resource-server tests.

Built on the ``mcp`` SDK's authorization-server routes (``create_auth_routes``: metadata,
dynamic client registration, ``/authorize`` with PKCE, ``/token``, ``/revoke``) with an
in-memory provider that approves every authorization at once (no person to ask), and issues
RS256 JWT access tokens (PyJWT) whose ``aud`` is the RFC 8707 ``resource`` the client asked
for. Besides those: its JWKS at ``/jwks`` (the metadata's ``jwks_uri``), which
:meth:`AuthorizationServer.rotate` replaces with a new key (the old one gone), and RFC 7662
introspection at ``/introspect`` for the opaque tokens it issues, for one resource-server
client (HTTP Basic).

Tests may also mint tokens directly (:meth:`AuthorizationServer.mint`): for another audience,
already expired, lacking a scope, signed by a key it does not publish.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.mcp_client import LEGACY
from tests.support.servers import free_port, serve

SCOPES = ["read", "run", "author", "admin"]
RESOURCE_SERVER = ("dynamic-tools", "rs-secret-" + "7c1e9a")  # its introspection credentials


class SigningKey:
    """An RSA key pair with its key id."""

    def __init__(self) -> None:
        self.kid = "k-" + secrets.token_hex(4)
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self) -> dict[str, Any]:
        """The public half as a JWK."""
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {**public, "kid": self.kid, "use": "sig", "alg": "RS256"}


class AuthorizationServer:
    """The server's state: keys, clients, codes, opaque tokens; and its ASGI app."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}"
        self.key = SigningKey()
        self.subject = "user-7"
        self.display_name = "Ada Lovelace"
        #: what every authorization grants (None: the scopes asked for)
        self.granted: list[str] | None = None
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.opaque: dict[str, dict[str, Any]] = {}
        self.jwks_reads = 0
        self.introspections = 0

    # --- tokens ----------------------------------------------------------------------------
    def mint(
        self,
        *,
        audience: str | list[str],
        scopes: list[str],
        expires_in: int = 600,
        subject: str | None = None,
        key: SigningKey | None = None,
        **claims: Any,
    ) -> str:
        """A signed JWT access token (RS256, RFC 9068 claims)."""
        now = int(time.time())
        signer = key or self.key
        payload = {
            "iss": self.issuer,
            "sub": subject or self.subject,
            "aud": audience,
            "iat": now,
            "exp": now + expires_in,
            "scope": " ".join(scopes),
            "name": self.display_name,
            "client_id": "test-client",
            "jti": secrets.token_hex(8),
            **claims,
        }
        return jwt.encode(
            payload,
            signer.private,
            algorithm="RS256",
            headers={"kid": signer.kid, "typ": "at+jwt"},
        )

    def issue_opaque(self, *, audience: str, scopes: list[str], expires_in: int = 600) -> str:
        """An opaque access token, known only to this server's introspection."""
        token = "opq_" + secrets.token_urlsafe(24)
        self.opaque[token] = {
            "active": True,
            "iss": self.issuer,
            "sub": self.subject,
            "aud": audience,
            "scope": " ".join(scopes),
            "exp": int(time.time()) + expires_in,
            "client_id": "test-client",
            "token_type": "Bearer",
        }
        return token

    def rotate(self) -> SigningKey:
        """Sign with a new key and publish only it; returns the old one (no longer published)."""
        old, self.key = self.key, SigningKey()
        return old

    # --- HTTP ------------------------------------------------------------------------------
    def app(self) -> Starlette:
        """The authorization server's ASGI app."""
        provider = _Provider(self)
        issuer_url = AnyHttpUrl(self.issuer)
        registration = ClientRegistrationOptions(
            enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES
        )
        revocation = RevocationOptions(enabled=True)
        routes = [
            r
            for r in create_auth_routes(provider, issuer_url, None, registration, revocation)
            if getattr(r, "path", "") != "/.well-known/oauth-authorization-server"
        ]
        metadata = build_metadata(issuer_url, None, registration, revocation)
        document = metadata.model_dump(mode="json", exclude_none=True)
        # RFC 8414: the issuer exactly as configured (no slash added by URL normalisation)
        document.update(
            issuer=self.issuer,
            jwks_uri=f"{self.issuer}/jwks",
            introspection_endpoint=f"{self.issuer}/introspect",
            introspection_endpoint_auth_methods_supported=["client_secret_basic"],
        )

        async def well_known(request: Request) -> JSONResponse:
            return JSONResponse(document)

        async def jwks(request: Request) -> JSONResponse:
            self.jwks_reads += 1
            return JSONResponse({"keys": [self.key.jwk()]})

        async def introspect(request: Request) -> JSONResponse:
            self.introspections += 1
            if request.headers.get("authorization") != _basic(*RESOURCE_SERVER):
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            form = await request.form()
            answer = self.opaque.get(str(form.get("token", "")))
            if answer is None or answer["exp"] < time.time():
                return JSONResponse({"active": False})
            return JSONResponse(answer)

        routes += [
            Route("/.well-known/oauth-authorization-server", well_known, methods=["GET"]),
            Route("/jwks", jwks, methods=["GET"]),
            Route("/introspect", introspect, methods=["POST"]),
        ]
        return Starlette(routes=routes)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


class _Provider:
    """The SDK's ``OAuthAuthorizationServerProvider``, in memory, approving every request."""

    def __init__(self, server: AuthorizationServer) -> None:
        self.server = server

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.server.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.server.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(32)
        assert client.client_id is not None
        self.server.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=self.server.subject,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.server.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.server.codes.pop(authorization_code.code, None)
        if authorization_code.resource is None:  # RFC 8707: this server names the audience
            raise TokenError("invalid_target", "a resource indicator is required")
        granted = self.server.granted
        scopes = authorization_code.scopes if granted is None else granted
        token = self.server.mint(audience=authorization_code.resource, scopes=scopes)
        return OAuthToken(access_token=token, expires_in=600, scope=" ".join(scopes))

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return None  # no refresh tokens are issued

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        raise TokenError("invalid_grant", "no refresh tokens are issued")

    async def load_access_token(self, token: str) -> AccessToken | None:
        answer = self.server.opaque.get(token)
        if answer is None:
            return None
        return AccessToken(
            token=token,
            client_id=answer["client_id"],
            scopes=answer["scope"].split(),
            expires_at=answer["exp"],
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.server.opaque.pop(token.token, None)


@contextmanager
def running_authorization_server() -> Iterator[AuthorizationServer]:
    """An :class:`AuthorizationServer` served on a free loopback port until the block ends."""
    port = free_port()
    server = AuthorizationServer(port)
    with serve(server.app(), port=port):
        yield server


class BrowserStandIn:
    """The person at the browser of an authorization-code flow: follows the authorization URL
    to the redirect the server answers (it approves at once) and hands back its code."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None
        self.visits = 0

    async def redirect(self, authorization_url: str) -> None:
        """Open ``authorization_url``; keep the code and state of the redirect it answers."""
        self.visits += 1
        async with httpx.AsyncClient() as http:
            answer = await http.get(authorization_url, follow_redirects=False)
        assert answer.status_code in (302, 303, 307), answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        self.result = AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    async def callback(self) -> AuthorizationCodeResult:
        """The code the last redirect carried."""
        assert self.result is not None, "the authorization URL was not visited"
        return self.result


class MemoryTokenStorage:
    """The SDK client's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        """The tokens stored."""
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Store tokens."""
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The client registration stored."""
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Store the client registration."""
        self.client_info = client_info


def oauth_mcp_client(
    base_url: str,
    browser: BrowserStandIn,
    storage: MemoryTokenStorage | None = None,
    *,
    mode: str = LEGACY,
) -> Client:
    """The SDK client for ``{base_url}/mcp`` with its OAuth flow: discovery from the 401,
    dynamic registration, authorization code with PKCE (``browser`` plays the person), token."""
    auth = OAuthClientProvider(
        server_url=f"{base_url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="dynamic-tools tests",
            redirect_uris=["http://127.0.0.1:9/callback"],  # never opened: the stand-in reads it
            grant_types=["authorization_code"],
            response_types=["code"],
        ),
        storage=storage or MemoryTokenStorage(),
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(60.0, read=120.0))
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=http), mode=mode)
