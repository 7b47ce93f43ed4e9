"""Tool secrets: how a tool names one, and what a literal credential looks like.

A tool's secret belongs to tools, never to the server: a reference can only name a *tool
secret*, ``secret:NAME``, which the server reads from the file ``NAME`` in ``SECRETS_DIR`` (when
set) or else from the environment variable ``DT_SECRET_NAME`` (``Settings.secret``). The long
form ``env:DT_SECRET_NAME`` means the same. Any other ``env:`` reference (``env:API_TOKEN``,
``env:OPENAI_API_KEY``, ``env:DATABASE_URL``...) is refused when the tool is loaded, so a tool
file can never make the server send its own settings to an API.

A credential is never written into a tool: static header and query parameters whose names look
like credentials (:func:`looks_like_credential`) and user info in URLs (``user:pass@``) are
refused, with the field named; ``auth`` with a secret reference is the way to send them.
"""

from __future__ import annotations

import re

from dynamic_tools.settings import TOOL_SECRET_ENV_PREFIX

SECRET_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,127}"
_REFERENCE = re.compile(rf"^(?:secret:(?P<name>{SECRET_NAME})|env:(?P<env>{SECRET_NAME}))$")

# Names compared lower-case with '-', '_' and '.' removed ("X-API-Key" -> "xapikey").
_CREDENTIAL_PARTS = (
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "apikey",
    "authorization",
    "credential",
    "privatekey",
    "accesskey",
    "secretkey",
    "subscriptionkey",
    "sessionid",
    "signature",
    "cookie",
)
_CREDENTIAL_NAMES = frozenset(
    {"auth", "xauth", "key", "sig", "pwd", "pass", "session", "jwt", "bearer", "sas"}
)


def secret_name(reference: str) -> str:
    """The tool secret a valid reference names (``secret:X`` and ``env:DT_SECRET_X`` → ``X``).

    Raises:
        ValueError: ``reference`` is not a tool secret reference; the message says why and
            what to write instead (it never repeats a value that may be a secret).
    """
    match = _REFERENCE.match(reference.strip())
    if match is None:
        raise ValueError(
            "must be a tool secret reference like 'secret:NAME' (read from SECRETS_DIR/NAME or "
            f"the environment variable {TOOL_SECRET_ENV_PREFIX}NAME), never the secret itself"
        )
    if match.group("name"):
        return match.group("name")
    variable = match.group("env")
    if variable.startswith(TOOL_SECRET_ENV_PREFIX) and len(variable) > len(TOOL_SECRET_ENV_PREFIX):
        return variable[len(TOOL_SECRET_ENV_PREFIX) :]
    raise ValueError(
        f"'env:{variable}' is not a tool secret: tools may only use secrets made for them, "
        "never the server's own settings. Write "
        f"'secret:{variable}' and set {TOOL_SECRET_ENV_PREFIX}{variable} (or the file "
        f"{variable} in SECRETS_DIR)"
    )


def environment_variable(name: str) -> str:
    """The environment variable that holds the tool secret ``name``."""
    return f"{TOOL_SECRET_ENV_PREFIX}{name}"


def looks_like_credential(name: str) -> bool:
    """Whether a header or query parameter name suggests its value is a credential."""
    flat = re.sub(r"[-_.\s]", "", name.lower())
    return flat in _CREDENTIAL_NAMES or any(part in flat for part in _CREDENTIAL_PARTS)
