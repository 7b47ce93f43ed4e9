"""Security schemes → :class:`AuthSpec`, with a secret *reference*, never a value.

The secret is the tool secret ``secret:<CATALOG>_TOKEN`` (the catalog name upper-cased, other
characters ``_``): the operator sets ``DT_SECRET_<CATALOG>_TOKEN`` (or the file
``<CATALOG>_TOKEN`` in ``SECRETS_DIR``). The name lives in the tool secrets' own namespace, so a
catalog named ``api`` gets ``secret:API_TOKEN`` (``DT_SECRET_API_TOKEN``), never the server's
``API_TOKEN``. Mapping:

- ``apiKey`` in a header or the query → ``api_key`` with that name;
- ``http`` ``bearer``, ``oauth2`` and ``openIdConnect`` → ``bearer`` (an access token obtained
  outside Dynamic Tools);
- ``http`` ``basic`` → not mapped (a user name is needed): a warning, calls go unauthenticated
  until the tool files are edited;
- ``apiKey`` in a cookie, and other schemes → not mapped, with a warning.

An operation's ``security`` overrides the document's; the first alternative that can be
mapped is used; ``{}`` (anonymous) or ``[]`` means no auth.
"""

from __future__ import annotations

import re
from typing import Any

from dynamic_tools.tools.models import AuthSpec
from dynamic_tools.tools.openapi.issues import IssueLog, pointer

_NO_AUTH = AuthSpec()


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
        self.secret = f"secret:{secret_env}"
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
            kind = scheme.get("type")
            http_scheme = str(scheme.get("scheme", "")).lower()
            location = scheme.get("in")
            if kind == "apiKey" and location in ("header", "query") and scheme.get("name"):
                spec = AuthSpec.model_validate(
                    {
                        "type": "api_key",
                        "in": location,
                        "name": scheme["name"],
                        "secret": self.secret,
                    }
                )
            elif (kind == "http" and http_scheme == "bearer") or kind in (
                "oauth2",
                "openIdConnect",
            ):
                spec = AuthSpec(type="bearer", secret=self.secret)
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
