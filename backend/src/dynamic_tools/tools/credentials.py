"""Tool secrets: how a tool names one, and what a literal credential looks like.

A tool's secret belongs to tools, never to the server: a reference can only name a *tool
secret*, ``secret:NAME``, which the server reads from the file ``NAME`` in ``SECRETS_DIR`` (when
set) or else from the environment variable ``DT_SECRET_NAME`` (``Settings.secret``). The long
form ``env:DT_SECRET_NAME`` means the same. Any other ``env:`` reference (``env:API_TOKEN``,
``env:OPENAI_API_KEY``, ``env:DATABASE_URL``...) is refused when the tool is loaded, so a tool
file can never make the server send its own settings to an API.

A reference is exactly ``secret:NAME`` (or ``env:DT_SECRET_NAME``): no surrounding spaces, no
line break, no control character.

A credential is never written into a tool: static header and query parameters whose names look
like credentials (:func:`looks_like_credential`), credential-named body fields, values of a known
token shape anywhere in static params and the URL (``dynamic_tools.literal_credentials``) and
user info in URLs (``user:pass@``) are refused, with the field named; ``auth`` with a secret
reference is the way to send them, or — for an API that takes one in its body — a top-level
static body field whose value is the reference (``client_secret: secret:NAME``).
"""

from __future__ import annotations

import re

from dynamic_tools.literal_credentials import looks_like_credential
from dynamic_tools.settings import TOOL_SECRET_ENV_PREFIX

__all__ = ["SECRET_NAME", "environment_variable", "looks_like_credential", "secret_name"]

SECRET_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,127}"
# Used with fullmatch: "$" would also match before a trailing line break ("secret:X\n").
_REFERENCE = re.compile(rf"secret:(?P<name>{SECRET_NAME})|env:(?P<env>{SECRET_NAME})")
_NOT_VISIBLE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def secret_name(reference: str) -> str:
    """The tool secret a valid reference names (``secret:X`` and ``env:DT_SECRET_X`` → ``X``).

    Raises:
        ValueError: ``reference`` is not a tool secret reference; the message says why and
            what to write instead (it never repeats a value that may be a secret).
    """
    if _NOT_VISIBLE.search(reference):
        raise ValueError(
            "must be exactly 'secret:NAME', with no spaces, line breaks or control characters "
            f"(the secret is read from SECRETS_DIR/NAME or the environment variable "
            f"{TOOL_SECRET_ENV_PREFIX}NAME)"
        )
    match = _REFERENCE.fullmatch(reference)
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
