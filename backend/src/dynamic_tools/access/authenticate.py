"""Who makes a request: the credential in ``Authorization: Bearer …`` turned into a principal.

Credentials, tried in this order:

1. ``API_TOKEN`` (constant-time comparison): the admin (``admin``, every scope) — so a
   one-person setup with a token keeps working unchanged;
2. an API key (``dtk_…``, ``access/keys.py``): its principal and scopes, refused at once when
   revoked or expired;
3. an OAuth access token, when an issuer is configured (:class:`BearerVerifier`, ``tokens.py``).

Access control is **on** when ``API_TOKEN`` is set, an issuer is configured, or the database
holds an active API key (checked every few seconds: creating the first key turns it on).
Otherwise every request is :data:`~dynamic_tools.access.principals.LOCAL`, the admin of a
one-person setup.

Refusals follow RFC 6750 and the MCP authorization specification: 401 with
``WWW-Authenticate: Bearer resource_metadata="…/.well-known/oauth-protected-resource"`` (and
``error="invalid_token"`` when a credential was given), 403 with
``error="insufficient_scope", scope="…"``.
"""

from __future__ import annotations

import hmac
import time
from typing import Protocol

from dynamic_tools.access.keys import KEY_PREFIX, ApiKeyStore
from dynamic_tools.access.principals import ADMIN_ID, LOCAL, Principal, Scope
from dynamic_tools.errors import AccessError, ForbiddenError, UnauthenticatedError

__all__ = [
    "ADMIN",
    "METADATA_PATH",
    "Authenticator",
    "BearerVerifier",
    "require",
    "www_authenticate",
]

#: the API_TOKEN holder
ADMIN = Principal(ADMIN_ID, "API_TOKEN holder", "token", frozenset(Scope))
#: where the protected resource metadata (RFC 9728) is served
METADATA_PATH = "/.well-known/oauth-protected-resource"
#: how long "are there active keys?" is trusted before asking the database again
_KEYS_CHECK_S = 2.0


class BearerVerifier(Protocol):
    """Checks an OAuth access token (a JWT against the issuer's keys, or by introspection)."""

    async def verify(self, token: str) -> Principal:
        """The token's principal.

        Raises:
            UnauthenticatedError: the token is not valid here (``invalid_token``), saying why.
        """
        ...


class Authenticator:
    """Turns an ``Authorization`` header into a principal (or refuses it)."""

    def __init__(
        self,
        *,
        api_token: str | None,
        keys: ApiKeyStore | None,
        bearer: BearerVerifier | None = None,
    ) -> None:
        self.api_token = api_token
        self.keys = keys
        self.bearer = bearer
        self._keys_seen: tuple[float, bool] = (0.0, False)

    async def enabled(self) -> bool:
        """Whether requests need a credential (see the module docstring)."""
        if self.api_token or self.bearer is not None:
            return True
        if self.keys is None:
            return False
        checked_at, present = self._keys_seen
        now = time.monotonic()
        if now - checked_at > _KEYS_CHECK_S:
            present = await self.keys.any_active()
            self._keys_seen = (now, present)
        return present

    async def principal(self, authorization: str | None) -> Principal:
        """The principal of a request with this ``Authorization`` header value.

        Raises:
            UnauthenticatedError: access control is on and the credential is missing or bad.
        """
        if not await self.enabled():
            return LOCAL
        token = _bearer_token(authorization)
        if token is None:
            raise UnauthenticatedError(
                "a credential is required: send 'Authorization: Bearer <token>' with API_TOKEN, "
                "an API key or an access token"
            )
        if self.api_token and hmac.compare_digest(token.encode(), self.api_token.encode()):
            return ADMIN
        if token.startswith(KEY_PREFIX) and self.keys is not None:
            found = await self.keys.verify(token)
            if found is None:
                raise UnauthenticatedError(
                    "the API key is not valid: unknown, revoked or expired", invalid_token=True
                )
            return found
        if self.bearer is not None:
            return await self.bearer.verify(token)
        raise UnauthenticatedError("the bearer credential is not valid here", invalid_token=True)


def require(principal: Principal, scope: Scope | None, what: str) -> None:
    """Refuse ``what`` unless ``principal`` holds ``scope`` (None: open to anyone).

    Raises:
        ForbiddenError: the scope is missing (named, with what it would allow).
    """
    if scope is None or principal.may(scope):
        return
    raise ForbiddenError(
        f"'{principal.name}' may not {what}: it needs the '{scope.value}' scope",
        scope=scope.value,
    )


def _bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    kind, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if kind.lower() != "bearer" or not token:
        return None
    return token


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def www_authenticate(error: AccessError, base_url: str, *, resource_path: str = "") -> str:
    """The ``WWW-Authenticate`` value for a refusal (RFC 6750 section 3, RFC 9728 section 5.1).

    ``base_url`` is this server's origin; ``resource_path`` is ``/mcp`` for the MCP endpoint
    (whose metadata is at ``/.well-known/oauth-protected-resource/mcp``).
    """
    parts = [f"resource_metadata={_quoted(base_url + METADATA_PATH + resource_path)}"]
    if isinstance(error, ForbiddenError):
        parts.insert(0, f"scope={_quoted(error.scope)}")
        parts.insert(0, 'error="insufficient_scope"')
    elif isinstance(error, UnauthenticatedError) and error.invalid_token:
        parts.insert(0, f"error_description={_quoted(error.message[:200])}")
        parts.insert(0, 'error="invalid_token"')
    return "Bearer " + ", ".join(parts)
