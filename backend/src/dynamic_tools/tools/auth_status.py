"""Whether a tool's secret is set, said without the secret.

What the tools page and the catalog views show, so a missing ``DT_SECRET_…`` is seen before
a call fails.

A view names the reference (``secret:PETSTORE_TOKEN``), says whether it resolves now
(``set``) and where to put it (``set_with``); the value is never read into the view beyond
that yes or no.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import Field

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.tools.credentials import environment_variable, secret_name
from dynamic_tools.tools.models import ToolConfig


class SecretStatus(LazyModel):
    """A secret reference, whether it is set now (never its value), and where to set it."""

    secret: str = Field(description="The reference, e.g. secret:PETSTORE_TOKEN")
    set: bool
    set_with: str = Field(description="The environment variable or file that sets it")


SecretLookup = Callable[[str], "str | None"]
"""The tool secret of a name, or None (``Settings.secret``)."""


def secret_status(reference: str, secret: SecretLookup) -> dict[str, Any]:
    """``{secret, set, set_with}`` of one reference; an unreadable secret file is not set."""
    name = secret_name(reference)
    try:
        present = bool(secret(name))
    except OSError:
        present = False
    return {
        "secret": reference,
        "set": present,
        "set_with": f"the environment variable {environment_variable(name)} or the file "
        f"{name} in SECRETS_DIR",
    }


def auth_view(tool: ToolConfig, secret: SecretLookup) -> dict[str, Any]:
    """How a tool authenticates, with its secrets' status (``{"type": "none"}`` for none).

    The body fields it sends a secret in (``static_params.secret_body``) are each shown with
    whether that secret is set (``body_secrets``).
    """
    auth, body = tool.auth, tool.static_params.secret_body
    shown = {"body_secrets": {f: secret_status(r, secret) for f, r in body.items()}} if body else {}
    if auth.type == "none" or not auth.secret:
        return {"type": "none", **shown}
    view: dict[str, Any] = {"type": auth.type, "in": auth.location, **shown}
    if auth.name:
        view["name"] = auth.name
    if auth.username:
        view["username"] = auth.username
    return {**view, **secret_status(auth.secret, secret)}


def secrets_needed(tools: Iterable[ToolConfig]) -> list[str]:
    """The secret references a set of tools uses (auth and static body fields), once, sorted."""
    needed: set[str] = set()
    for tool in tools:
        if tool.auth.type != "none" and tool.auth.secret:
            needed.add(tool.auth.secret)
        needed.update(tool.static_params.secret_body.values())
    return sorted(needed)


__all__ = ["SecretLookup", "SecretStatus", "auth_view", "secret_status", "secrets_needed"]
