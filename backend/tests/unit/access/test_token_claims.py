"""What an access token's claims make of a principal, and where an issuer's metadata is looked
for (the checks themselves run against a real issuer: tests/integration/access)."""

from __future__ import annotations

import pytest

from dynamic_tools.access.issuer import discovery_urls, issuer_forms, shown
from dynamic_tools.access.principals import Scope
from dynamic_tools.access.tokens import principal_from_claims
from dynamic_tools.errors import UnauthenticatedError


def test_a_principal_is_oauth_sub_with_the_servers_own_scopes() -> None:
    principal = principal_from_claims(
        {"sub": "248289761001", "preferred_username": "jane", "scope": "openid read run"}
    )
    assert principal.id == "oauth:248289761001"
    assert principal.name == "jane" and principal.kind == "oauth"
    assert principal.scopes == {Scope.READ, Scope.RUN}
    listed = principal_from_claims({"sub": "s", "name": "Jane Doe", "scp": ["author", "x:y"]})
    assert listed.name == "Jane Doe" and listed.scopes == {Scope.AUTHOR}
    bare = principal_from_claims({"sub": "svc-1", "scp": "admin"})
    assert bare.name == "svc-1" and bare.is_admin


@pytest.mark.parametrize(
    ("claims", "said"),
    [
        ({"scope": "read"}, "no subject"),
        ({"sub": "  "}, "no subject"),
        ({"sub": "x" * 250}, "over 249 characters"),
    ],
)
def test_a_token_without_a_usable_subject_is_refused(claims: dict[str, object], said: str) -> None:
    with pytest.raises(UnauthenticatedError) as refused:
        principal_from_claims(claims)
    assert refused.value.invalid_token and said in refused.value.message


def test_values_read_from_a_token_are_shown_safely() -> None:
    assert shown('k1"\r\nSet-Cookie: a=b') == "k1Set-Cookie: a=b"
    assert len(shown("k" * 500)) == 60


def test_metadata_is_looked_for_where_rfc_8414_and_oidc_put_it() -> None:
    assert discovery_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]
    assert discovery_urls("https://login.example/realms/dt/") == [
        "https://login.example/.well-known/oauth-authorization-server/realms/dt",
        "https://login.example/.well-known/openid-configuration/realms/dt",
        "https://login.example/realms/dt/.well-known/openid-configuration",
    ]
    assert issuer_forms("https://as.example/") == {"https://as.example/", "https://as.example"}
    assert issuer_forms("https://as.example/t1") == {"https://as.example/t1"}
