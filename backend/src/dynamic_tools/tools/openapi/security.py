"""Security schemes → :class:`AuthSpec`, with a secret *reference*, never a value.

The secret is the tool secret ``secret:<CATALOG>_TOKEN`` (the catalog name upper-cased, other
characters ``_``): the operator sets ``DT_SECRET_<CATALOG>_TOKEN`` (or the file
``<CATALOG>_TOKEN`` in ``SECRETS_DIR``). The name lives in the tool secrets' own namespace, so a
catalog named ``api`` gets ``secret:API_TOKEN`` (``DT_SECRET_API_TOKEN``), never the server's
``API_TOKEN``. Mapping:

- ``apiKey`` in a header or the query → ``api_key`` with that name;
- ``http`` ``bearer``, ``oauth2`` and ``openIdConnect`` → ``bearer`` (an access token obtained
  outside Dynamic Tools);
- ``http`` ``basic`` → ``basic`` when the scheme gives its user name
  (``x-dynamic-tools-username``), else not mapped (a user name is needed): a warning, calls go
  unauthenticated until the tool files are edited;
- ``apiKey`` in a cookie, and other schemes → not mapped, with a warning.

An operation's ``security`` overrides the document's; the first alternative that can be
mapped is used; ``{}`` (anonymous) or ``[]`` means no auth.

A scheme may name its tool secret with ``x-dynamic-tools-secret`` (and basic auth its user
name with ``x-dynamic-tools-username``): Dynamic Tools' own exports write them, so importing an
export gives tools with the same ``secret:NAME`` references (docs/arazzo.md, "Export"). A name
other than the catalog's is a warning (``named_secret``): the document chooses which secret is
sent to its servers, and the preview says so.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from dynamic_tools.tools.credentials import SECRET_NAME
from dynamic_tools.tools.models import AuthSpec
from dynamic_tools.tools.openapi.issues import IssueLog, pointer

_NO_AUTH = AuthSpec()
SECRET_EXTENSION = "x-dynamic-tools-secret"
"""A security scheme's extension naming its tool secret (``NAME`` of ``secret:NAME``)."""
USERNAME_EXTENSION = "x-dynamic-tools-username"
"""A basic auth scheme's extension holding its user name (a plain name, never a secret)."""


def secret_env_name(catalog: str | None) -> str:
    """``<CATALOG>_TOKEN``: the name of a catalog's tool secret (``secret:<CATALOG>_TOKEN``)."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", catalog or "openapi").strip("_").upper() or "OPENAPI"
    if stem[0].isdigit():
        stem = "_" + stem
    return f"{stem}_TOKEN"


class AuthMapper:
    """Maps security requirements of one document; warnings appear once per scheme."""

    def __init__(self, schemes: Any, log: IssueLog, *, secret_env: str) -> None:
        self.schemes = schemes if isinstance(schemes, dict) else {}
        self.log = log
        self.secret_env = secret_env
        self._cache: dict[str, AuthSpec | None] = {}

    def for_requirements(self, requirements: Any) -> AuthSpec:
        """The auth of an operation whose effective ``security`` is ``requirements``."""
        if not isinstance(requirements, list):
            return _NO_AUTH
        for alternative in requirements:
            if not isinstance(alternative, dict) or not alternative:
                return _NO_AUTH  # anonymous access is allowed
            for name in alternative:
                spec = self._scheme(str(name))
                if spec is not None:
                    return spec
        return _NO_AUTH

    def _scheme(self, name: str) -> AuthSpec | None:
        if name in self._cache:
            return self._cache[name]
        where = pointer("components", "securitySchemes", name)
        scheme = self.schemes.get(name)
        spec: AuthSpec | None = None
        if not isinstance(scheme, dict):
            self.log.add(
                where, "unknown_security_scheme", f"security scheme '{name}' is not defined"
            )
        else:
            secret = self._secret_of(name, scheme, where)
            kind = scheme.get("type")
            http_scheme = str(scheme.get("scheme", "")).lower()
            location = scheme.get("in")
            username = _username(scheme)
            if kind == "apiKey" and location in ("header", "query") and scheme.get("name"):
                spec = AuthSpec.model_validate(
                    {
                        "type": "api_key",
                        "in": location,
                        "name": scheme["name"],
                        "secret": secret,
                    }
                )
            elif (kind == "http" and http_scheme == "bearer") or kind in (
                "oauth2",
                "openIdConnect",
            ):
                spec = AuthSpec(type="bearer", secret=secret)
            elif kind == "http" and http_scheme == "basic" and username:
                try:
                    spec = AuthSpec(type="basic", secret=secret, username=username)
                except ValidationError:
                    self.log.add(
                        where,
                        "unsupported_security",
                        f"the user name of '{name}' ({USERNAME_EXTENSION}) looks like a "
                        "credential; calls are sent without auth",
                    )
            elif kind == "http" and http_scheme == "basic":
                self.log.add(
                    where,
                    "unsupported_security",
                    f"basic auth ('{name}') needs a user name; set auth.username and "
                    "auth.secret in the catalog's tools to use it",
                )
            else:
                self.log.add(
                    where,
                    "unsupported_security",
                    f"security scheme '{name}' ({kind}"
                    + (f" in {location}" if location else "")
                    + ") cannot be mapped; calls are sent without it",
                )
        self._cache[name] = spec
        return spec

    def _secret_of(self, name: str, scheme: dict[str, Any], where: str) -> str:
        """``secret:<the scheme's x-dynamic-tools-secret>``, else the catalog's secret."""
        named = scheme.get(SECRET_EXTENSION)
        if named is None or named == self.secret_env:
            return f"secret:{self.secret_env}"
        if not isinstance(named, str) or not re.fullmatch(SECRET_NAME, named):
            self.log.add(
                where,
                "invalid_secret_name",
                f"{SECRET_EXTENSION} of '{name}' is not a tool secret name (letters, digits "
                f"and '_'); the catalog's secret:{self.secret_env} is used",
            )
            return f"secret:{self.secret_env}"
        self.log.add(
            where,
            "named_secret",
            f"security scheme '{name}' names the tool secret secret:{named} "
            f"({SECRET_EXTENSION}) instead of the catalog's secret:{self.secret_env}: its "
            "value is sent to this document's servers",
        )
        return f"secret:{named}"


def _username(scheme: dict[str, Any]) -> str | None:
    """The user name a basic scheme's ``x-dynamic-tools-username`` gives (None: none)."""
    value = scheme.get(USERNAME_EXTENSION)
    return value.strip() if isinstance(value, str) and value.strip() else None
