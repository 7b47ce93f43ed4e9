"""The authorization server this resource server trusts: its metadata, signing keys, introspection.

Everything is read through the SSRF guard (``http/target_guard.py``): an issuer on a private or
loopback address must be listed in ``ALLOWED_TARGET_HOSTS``. No redirect is followed, every body
is capped and parsed without recursion (``safe_parsing.py``), every exchange has a deadline.

- **Metadata** (RFC 8414, OpenID Connect Discovery): read on first need from
  ``/.well-known/oauth-authorization-server`` (path-inserted for an issuer with a path), then
  ``/.well-known/openid-configuration``; its ``issuer`` must be ``OAUTH_ISSUER`` (RFC 8414
  section 3.3). Kept for an hour. Not read at all when ``OAUTH_JWKS_URL`` (and, when
  introspecting, ``OAUTH_INTROSPECTION_URL``) are set.
- **Signing keys** (the JWKS at ``jwks_uri`` or ``OAUTH_JWKS_URL``): kept for an hour, then read
  again, so a key the issuer withdrew stops working. A token naming a key (``kid``) not in the
  set read last makes the set be read again at once — that is how a rotated key is picked up —
  but at most once every :data:`UNKNOWN_KEY_REFETCH_S` seconds, so tokens with made-up key ids
  cannot turn this server into a stream of requests to the issuer. Symmetric (``oct``) keys
  and keys whose ``use`` is not ``sig`` are ignored.
- **Introspection** (RFC 7662) of opaque tokens, when ``OAUTH_CLIENT_ID`` is set: ``POST`` to
  ``introspection_endpoint`` (or ``OAUTH_INTROSPECTION_URL``) with this server's client
  credentials (HTTP Basic); an answer is kept :data:`INTROSPECTION_CACHE_S` seconds at most
  (never past the token's ``exp``), keyed by the token's SHA-256, never by the token itself.

An issuer that cannot be reached raises :class:`~dynamic_tools.errors.TransportError` (502,
retryable); one that answers something unusable (refused by the guard, an HTTP error, not JSON,
another ``issuer``, no keys) raises :class:`~dynamic_tools.errors.ConfigurationError` (503)
naming the URL and the setting to look at.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from dynamic_tools.errors import (
    ConfigurationError,
    DocumentSourceError,
    TargetRefusedError,
    TransportError,
    UnauthenticatedError,
)
from dynamic_tools.http.decoding import ACCEPT_ENCODING, UndecodableBody, read_response
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.http.failures import outbound_failure
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.safe_parsing import TooDeep, loads_json

__all__ = [
    "INTROSPECTION_CACHE_S",
    "KEYS_MAX_AGE_S",
    "UNKNOWN_KEY_REFETCH_S",
    "IssuerClient",
    "issuer_forms",
    "shown",
]

#: how long the issuer's metadata is kept
METADATA_MAX_AGE_S = 3600.0
#: how long a key set is kept before it is read again (withdrawn keys stop working then)
KEYS_MAX_AGE_S = 3600.0
#: the shortest time between two reads caused by a token naming an unknown key
UNKNOWN_KEY_REFETCH_S = 10.0
#: the longest time an introspection answer is kept
INTROSPECTION_CACHE_S = 30.0
#: the most introspection answers kept at once (the oldest go first)
INTROSPECTION_CACHE_SIZE = 10_000
#: the largest metadata, key set or introspection answer read
MAX_DOCUMENT_BYTES = 512 * 1024
#: how deep such a document may nest (they are flat: a few levels)
MAX_DEPTH = 32
USER_AGENT = "dynamic-tools/0.1 (oauth resource server)"


def issuer_forms(issuer: str) -> frozenset[str]:
    """The spellings of ``issuer`` that name it (a root issuer with and without its slash).

    ``https://as.example`` and ``https://as.example/`` are one origin; a path issuer is exact.
    """
    parts = urlsplit(issuer)
    if parts.path in ("", "/"):
        bare = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        return frozenset({issuer, bare, bare + "/"})
    return frozenset({issuer})


def shown(value: object, limit: int = 60) -> str:
    """A value read from a token, safe in a message and a header: printable ASCII, shortened."""
    text = "".join(c for c in str(value) if 32 <= ord(c) < 127 and c not in '"\\')
    return text if len(text) <= limit else text[: limit - 3] + "..."


class IssuerClient:
    """Reads the issuer's metadata and keys, and introspects tokens, through the guard."""

    def __init__(
        self,
        *,
        issuer: str,
        client: httpx.AsyncClient,
        guard: TargetGuard,
        jwks_url: str | None = None,
        introspection_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        timeout_s: float = 30.0,
        deadline_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.client = client
        self.guard = guard
        self.fetcher = DocumentFetcher(
            client=client,
            guard=guard,
            local_roots=[],  # URLs only: the sources are settings and the issuer's metadata
            max_bytes=MAX_DOCUMENT_BYTES,
            timeout_s=timeout_s,
            deadline_s=deadline_s,
        )
        self._jwks_url = jwks_url
        self._introspection_url = introspection_url
        self._client_id = client_id
        self._client_secret = client_secret
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self._clock = clock
        self._lock = asyncio.Lock()
        self._metadata: tuple[float, dict[str, Any]] | None = None
        self._keys: tuple[float, list[dict[str, Any]]] | None = None
        self._forced_at: float | None = None
        self._introspected: dict[str, tuple[float, dict[str, Any]]] = {}

    @property
    def introspects(self) -> bool:
        """Whether opaque tokens are introspected (``OAUTH_CLIENT_ID`` is set)."""
        return self._client_id is not None

    # --- metadata --------------------------------------------------------------------------
    async def metadata(self) -> dict[str, Any]:
        """The issuer's metadata (RFC 8414 or OpenID Connect Discovery), read once an hour."""
        async with self._lock:
            return await self._metadata_locked()

    async def _metadata_locked(self) -> dict[str, Any]:
        now = self._clock()
        if self._metadata is not None and now - self._metadata[0] < METADATA_MAX_AGE_S:
            return self._metadata[1]
        tried = []
        for url in discovery_urls(self.issuer):
            tried.append(url)
            data = await self._get_json(url, "metadata", missing_ok=True)
            if data is None:
                continue
            named = data.get("issuer")
            if not isinstance(named, str) or named not in issuer_forms(self.issuer):
                raise ConfigurationError(
                    f"the metadata at {url} names the issuer '{shown(named, 200)}', not "
                    f"OAUTH_ISSUER '{self.issuer}' (RFC 8414 section 3.3): set OAUTH_ISSUER to "
                    "the issuer's exact identifier",
                    context={"setting": "OAUTH_ISSUER", "url": url},
                )
            self._metadata = (now, data)
            return data
        raise ConfigurationError(
            f"the issuer '{self.issuer}' publishes no metadata (tried {', '.join(tried)}): check "
            "OAUTH_ISSUER, or set OAUTH_JWKS_URL",
            context={"setting": "OAUTH_ISSUER", "tried": tried},
        )

    async def _endpoint(self, field: str, setting: str) -> str | None:
        async with self._lock:
            data = await self._metadata_locked()
        value = data.get(field)
        if value is None:
            return None
        if not isinstance(value, str) or not value.lower().startswith(("http://", "https://")):
            raise ConfigurationError(
                f"the issuer's metadata gives '{field}' as '{shown(value, 200)}', not an http(s) "
                f"URL: set {setting}",
                context={"setting": setting},
            )
        return value

    async def jwks_url(self) -> str | None:
        """Where the issuer's signing keys are: ``OAUTH_JWKS_URL``, else ``jwks_uri``."""
        if self._jwks_url is None:
            self._jwks_url = await self._endpoint("jwks_uri", "OAUTH_JWKS_URL")
        return self._jwks_url

    async def introspection_url(self) -> str:
        """The introspection endpoint: ``OAUTH_INTROSPECTION_URL``, else the metadata's."""
        if self._introspection_url is None:
            found = await self._endpoint("introspection_endpoint", "OAUTH_INTROSPECTION_URL")
            if found is None:
                raise ConfigurationError(
                    "the issuer's metadata names no introspection_endpoint: set "
                    "OAUTH_INTROSPECTION_URL",
                    context={"setting": "OAUTH_INTROSPECTION_URL"},
                )
            self._introspection_url = found
        return self._introspection_url

    # --- signing keys ----------------------------------------------------------------------
    async def signing_key(self, kid: str | None) -> dict[str, Any]:
        """The public key (a JWK) a token names by ``kid`` (None: the issuer's only key).

        Raises:
            UnauthenticatedError: no such key, even after reading the set again (when allowed).
        """
        url = await self.jwks_url()
        if url is None:
            raise ConfigurationError(
                "the issuer's metadata names no jwks_uri, so JWT access tokens cannot be "
                "checked: set OAUTH_JWKS_URL (or OAUTH_CLIENT_ID to introspect them)",
                context={"setting": "OAUTH_JWKS_URL"},
            )
        async with self._lock:
            keys = await self._keys_locked(url, force=False)
            found = _pick(keys, kid)
            if found is None and self._may_force():
                self._forced_at = self._clock()
                keys = await self._keys_locked(url, force=True)
                found = _pick(keys, kid)
        if found is not None:
            return found
        if kid is None:
            raise UnauthenticatedError(
                "the access token names no signing key (kid) and the issuer publishes several",
                invalid_token=True,
            )
        raise UnauthenticatedError(
            f"the access token is signed with a key the issuer does not publish (kid "
            f"'{shown(kid)}')",
            invalid_token=True,
        )

    def _may_force(self) -> bool:
        return self._forced_at is None or self._clock() - self._forced_at >= UNKNOWN_KEY_REFETCH_S

    async def _keys_locked(self, url: str, *, force: bool) -> list[dict[str, Any]]:
        now = self._clock()
        if not force and self._keys is not None and now - self._keys[0] < KEYS_MAX_AGE_S:
            return self._keys[1]
        data = await self._get_json(url, "key set (JWKS)")
        assert data is not None
        listed = data.get("keys")
        if not isinstance(listed, list):
            raise ConfigurationError(
                f"the key set at {url} has no 'keys' list (RFC 7517)",
                context={"setting": "OAUTH_JWKS_URL", "url": url},
            )
        keys = [k for k in listed if _usable(k)]
        if not keys:
            raise ConfigurationError(
                f"the key set at {url} holds no public signing key",
                context={"setting": "OAUTH_JWKS_URL", "url": url},
            )
        self._keys = (now, keys)
        return keys

    # --- introspection ---------------------------------------------------------------------
    async def introspect(self, token: str) -> dict[str, Any]:
        """The issuer's RFC 7662 answer about ``token`` (kept a few seconds)."""
        digest = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock()
        cached = self._introspected.get(digest)
        if cached is not None and cached[0] > now:
            return cached[1]
        url = await self.introspection_url()
        answer = await self._post_introspection(url, token)
        keep = INTROSPECTION_CACHE_S
        expires = answer.get("exp")
        if isinstance(expires, int | float) and not isinstance(expires, bool):
            keep = min(keep, max(0.0, float(expires) - time.time()))
        self._remember(digest, now + keep, answer)
        return answer

    def _remember(self, digest: str, until: float, answer: dict[str, Any]) -> None:
        now = self._clock()
        if len(self._introspected) >= INTROSPECTION_CACHE_SIZE:
            for key in [k for k, (t, _) in self._introspected.items() if t <= now]:
                del self._introspected[key]
        while len(self._introspected) >= INTROSPECTION_CACHE_SIZE:
            del self._introspected[next(iter(self._introspected))]
        self._introspected[digest] = (until, answer)

    async def _post_introspection(self, url: str, token: str) -> dict[str, Any]:
        parts = urlsplit(url)
        try:
            await self.guard.check(parts.scheme, parts.hostname or "", parts.port, parts.path)
        except TargetRefusedError as exc:
            raise ConfigurationError(
                f"the introspection endpoint {url} is refused: {exc.message}",
                context={"setting": "OAUTH_INTROSPECTION_URL", "url": url},
            ) from None
        assert self._client_id is not None and self._client_secret is not None
        # RFC 6749 section 2.3.1: both parts form-encoded before Basic
        pair = f"{quote(self._client_id, safe='')}:{quote(self._client_secret, safe='')}"
        request = self.client.build_request(
            "POST",
            url,
            data={"token": token, "token_type_hint": "access_token"},
            headers={
                "Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii"),
                "Accept": "application/json",
                "Accept-Encoding": ACCEPT_ENCODING,
                "User-Agent": USER_AGENT,
            },
            timeout=self.timeout_s,
        )
        timer = asyncio.timeout(self.deadline_s)
        try:
            async with timer:
                response = await self.client.send(request, follow_redirects=False, stream=True)
                try:
                    content, cut = await read_response(response, MAX_DOCUMENT_BYTES)
                finally:
                    await response.aclose()
        except Exception as exc:  # every failure of the HTTP stack, by kind (http.failures)
            if timer.expired():
                raise TransportError(
                    f"introspection at {url} did not finish within {self.deadline_s:g} s",
                    context={"url": url},
                    timed_out=True,
                ) from None
            if isinstance(exc, UndecodableBody):
                raise ConfigurationError(
                    f"the introspection answer of {url} cannot be read ({exc})",
                    context={"url": url},
                ) from None
            raise outbound_failure(
                exc, what=f"introspection at {url}", context={"url": url}
            ) from None
        status = response.status_code
        if status in (401, 403):
            raise ConfigurationError(
                f"the introspection endpoint {url} refused this server's client credentials "
                f"(HTTP {status}): check OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET",
                context={"setting": "OAUTH_CLIENT_ID", "url": url},
            )
        if status != 200 or cut:
            reason = f"answered HTTP {status}" if status != 200 else "answered too much"
            raise ConfigurationError(
                f"the introspection endpoint {url} {reason}", context={"url": url}
            )
        return _json_object(content, url, "introspection answer")

    # --- reading ---------------------------------------------------------------------------
    async def _get_json(
        self, url: str, what: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        try:
            document = await self.fetcher.fetch(url, "url")
        except DocumentSourceError as exc:
            if missing_ok and exc.context.get("status_code") in (404, 405):
                return None
            raise ConfigurationError(
                f"the issuer's {what} cannot be read: {exc.message}", context={"url": url}
            ) from None
        return _json_object(document.content, url, what)


def discovery_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be (RFC 8414 section 3.1 and section 5; OIDC Discovery)."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [
            origin + "/.well-known/oauth-authorization-server",
            origin + "/.well-known/openid-configuration",
        ]
    return [
        origin + "/.well-known/oauth-authorization-server" + path,
        origin + "/.well-known/openid-configuration" + path,
        origin + path + "/.well-known/openid-configuration",
    ]


def _json_object(content: bytes, url: str, what: str) -> dict[str, Any]:
    try:
        data = loads_json(content, MAX_DEPTH)
    except (ValueError, TooDeep):
        data = None
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"the issuer's {what} at {url} is not a JSON object", context={"url": url}
        )
    return data


def _usable(key: object) -> bool:
    """A public signing key: an asymmetric ``kty``, ``use`` absent or ``sig``."""
    return (
        isinstance(key, dict)
        and key.get("kty") in ("RSA", "EC", "OKP")
        and key.get("use", "sig") == "sig"
    )


def _pick(keys: list[dict[str, Any]], kid: str | None) -> dict[str, Any] | None:
    if kid is None:
        return keys[0] if len(keys) == 1 else None
    return next((k for k in keys if k.get("kid") == kid), None)
