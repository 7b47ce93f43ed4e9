"""OAuth access tokens (an OAuth 2.1 resource server): checked, then turned into a principal.

The :class:`~dynamic_tools.access.authenticate.BearerVerifier` of a server with ``OAUTH_ISSUER``
(README "Configuring an issuer"). A token is accepted when:

- **a JWT** (RFC 9068): signed with one of :data:`ALGORITHMS` (never ``none``, never a shared
  secret: HS* is refused, a resource server must not hold the key that mints tokens) by a key
  the issuer publishes (``access/issuer.py``: JWKS, read again when a token names a new key);
  ``iss`` is ``OAUTH_ISSUER``; ``aud`` names this server (``Settings.oauth_audiences``: its
  resource URIs ``<base>`` and ``<base>/mcp`` by default — a token for another resource is
  refused, RFC 8707); ``exp`` is in the future and ``nbf``/``iat`` not in it, with
  :data:`LEEWAY_S` seconds of clock skew; ``sub`` is present;
- **opaque**, when introspection is configured (``OAUTH_CLIENT_ID``): the issuer says it is
  ``active`` (RFC 7662), and its ``exp``, ``nbf``, ``iss`` and ``aud``, when given, pass the
  same checks. A JWT is introspected too when the issuer publishes no keys.

The principal: id ``oauth:<sub>`` (one issuer is trusted, so ``sub`` is unique), name from
``name``, ``preferred_username`` or ``sub``, kind ``oauth``, scopes from ``scope`` (a
space-separated string) or ``scp`` (a list, or a string), keeping the server's own
(``read``, ``run``, ``author``, ``admin``) and ignoring others (``openid``, ``offline_access``).
A token with none of them authenticates but may do nothing that needs a scope (403).

Every refusal is :class:`~dynamic_tools.errors.UnauthenticatedError` with ``invalid_token``,
saying why (expired, another audience, unknown key, bad signature, inactive...); the token
itself is never echoed, values read from it are shortened to printable ASCII.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dynamic_tools.access.issuer import IssuerClient, issuer_forms, shown
from dynamic_tools.access.principals import Principal, Scope
from dynamic_tools.errors import UnauthenticatedError

if TYPE_CHECKING:
    import jwt

__all__ = ["ALGORITHMS", "LEEWAY_S", "OAuthVerifier", "principal_from_claims"]

#: the signature algorithms accepted: asymmetric only
ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
#: clock skew allowed on exp, nbf and iat
LEEWAY_S = 30
#: the owner columns hold 255 characters: "oauth:" and a subject of up to this many
MAX_SUBJECT = 249
_JWT_SHAPE = re.compile(r"^[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]*={0,2}$")
_KNOWN = {s.value: s for s in Scope}


def _refused(reason: str) -> UnauthenticatedError:
    return UnauthenticatedError(reason, invalid_token=True)


class OAuthVerifier:
    """Checks access tokens of one issuer for this server (see the module docstring)."""

    def __init__(self, issuer: IssuerClient, *, audiences: Sequence[str]) -> None:
        self.issuer = issuer
        self.audiences = list(audiences)
        self.issuers = issuer_forms(issuer.issuer)

    async def verify(self, token: str) -> Principal:
        """The principal of ``token``.

        Raises:
            UnauthenticatedError: the token is not valid here, saying why (``invalid_token``).
            ConfigurationError: the issuer's metadata or keys are unusable (the setting named).
            TransportError: the issuer could not be reached.
        """
        if _JWT_SHAPE.match(token) and (
            not self.issuer.introspects or await self.issuer.jwks_url() is not None
        ):
            return principal_from_claims(await self._jwt_claims(token))
        if not self.issuer.introspects:
            raise _refused(
                "the bearer credential is neither API_TOKEN, an API key nor a JWT access token "
                "(opaque tokens are not introspected: OAUTH_CLIENT_ID is not set)"
            )
        return principal_from_claims(self._introspected(await self.issuer.introspect(token)))

    async def _jwt_claims(self, token: str) -> dict[str, Any]:
        import jwt  # PyJWT and cryptography load with the first JWT (docs/performance.md)

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refused("the access token is not a well-formed JWT") from None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise _refused(
                f"the access token is signed with '{shown(algorithm)}'; this server accepts "
                f"{', '.join(ALGORITHMS)} (asymmetric signatures only)"
            )
        kid = header.get("kid")
        jwk = await self.issuer.signing_key(kid if isinstance(kid, str) else None)
        try:
            key = jwt.PyJWK(jwk, algorithm=jwk.get("alg") or algorithm)
        except jwt.PyJWTError:
            raise _refused(
                f"the issuer's key '{shown(jwk.get('kid'))}' cannot check a {algorithm} signature"
            ) from None
        if key.algorithm_name != algorithm:
            raise _refused(
                f"the access token says {algorithm} but its key '{shown(jwk.get('kid'))}' is for "
                f"{key.algorithm_name}"
            )
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.audiences,
                issuer=self.issuers,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise _refused(self._why(exc)) from None
        return claims

    def _why(self, exc: jwt.PyJWTError) -> str:
        """What is wrong with a JWT, in words (PyJWT's exception, told by its type)."""
        import jwt

        if isinstance(exc, jwt.ExpiredSignatureError):
            return "the access token has expired (exp)"
        if isinstance(exc, jwt.ImmatureSignatureError):
            return "the access token is not valid yet (nbf or iat in the future)"
        if isinstance(exc, jwt.InvalidAudienceError):
            return (
                "the access token is for another resource: its audience (aud) is not this "
                f"server ({', '.join(self.audiences)})"
            )
        if isinstance(exc, jwt.InvalidIssuerError):
            return f"the access token was issued by another issuer (iss), not {self.issuer.issuer}"
        if isinstance(exc, jwt.MissingRequiredClaimError):
            return f"the access token has no '{exc.claim}' claim"
        if isinstance(exc, jwt.InvalidSignatureError):
            return "the access token's signature does not verify with the issuer's key"
        if isinstance(exc, jwt.DecodeError):
            return "the access token is not a well-formed JWT"
        return f"the access token is not valid ({type(exc).__name__})"

    def _introspected(self, answer: Mapping[str, Any]) -> Mapping[str, Any]:
        """An introspection answer checked as a JWT's claims would be (RFC 7662 section 2.2)."""
        if answer.get("active") is not True:
            raise _refused("the issuer says the access token is not active (RFC 7662)")
        now = time.time()
        expires, not_before = answer.get("exp"), answer.get("nbf")
        if isinstance(expires, int | float) and expires + LEEWAY_S < now:
            raise _refused("the access token has expired (exp)")
        if isinstance(not_before, int | float) and not_before - LEEWAY_S > now:
            raise _refused("the access token is not valid yet (nbf)")
        issuer = answer.get("iss")
        if issuer is not None and issuer not in self.issuers:
            raise _refused(
                f"the access token was issued by another issuer (iss), not {self.issuer.issuer}"
            )
        audience = answer.get("aud")
        if audience is not None:
            named = [audience] if isinstance(audience, str) else audience
            if not isinstance(named, list) or not set(self.audiences) & {
                a for a in named if isinstance(a, str)
            }:
                raise _refused(
                    "the access token is for another resource: its audience (aud) is not this "
                    f"server ({', '.join(self.audiences)})"
                )
        return answer


def principal_from_claims(claims: Mapping[str, Any]) -> Principal:
    """The principal of checked claims: ``oauth:<sub>``, a display name, the known scopes."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject.strip():
        raise _refused("the access token names no subject (sub)")
    if len(subject) > MAX_SUBJECT:
        raise _refused(f"the access token's subject (sub) is over {MAX_SUBJECT} characters")
    name = next(
        (
            claims[k]
            for k in ("name", "preferred_username")
            if isinstance(claims.get(k), str) and claims[k].strip()
        ),
        subject,
    )
    return Principal(f"oauth:{subject}", shown(name, 120), "oauth", _scopes(claims))


def _scopes(claims: Mapping[str, Any]) -> frozenset[Scope]:
    """The server's scopes among ``scope`` (space-separated) and ``scp`` (a list or a string)."""
    names: list[str] = []
    for field in ("scope", "scp"):
        value = claims.get(field)
        if isinstance(value, str):
            names.extend(value.split())
        elif isinstance(value, list):
            names.extend(_strings(value))
    return frozenset(_KNOWN[n] for n in names if n in _KNOWN)


def _strings(values: Iterable[object]) -> list[str]:
    return [v for v in values if isinstance(v, str)]
