"""Who an MCP request speaks for: the principal the HTTP edge authenticated, or the operator.

Over streamable HTTP, the edge (``api/edge.py``) turns the request's credential into a
principal and keeps it in the request's state; :func:`principal_of` reads it from the Starlette
request of a handler's context. Over stdio there is no request: the process is the operator's
own (:data:`~dynamic_tools.access.principals.LOCAL`, the admin).

The server binds a request's principal (:func:`bind_principal`) before a tool runs, so the
operations behind tools — which take their arguments only — ask :func:`current_principal` whose
runs they may see and act on; background work started by the call (a task's job) inherits it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from dynamic_tools.access.principals import LOCAL, Principal
from dynamic_tools.errors import UnauthenticatedError
from dynamic_tools.mcp.http_context import http_request

__all__ = ["bind_principal", "current_principal", "principal_of"]

_current: ContextVar[Principal | None] = ContextVar("mcp_principal", default=None)


def principal_of(ctx: Any) -> Principal:
    """The principal of the MCP request ``ctx`` (stdio: the operator, an admin).

    Raises:
        UnauthenticatedError: an HTTP request the edge did not authenticate (never served).
    """
    request = http_request(ctx)
    if request is None:
        return LOCAL
    state = request.scope.get("state") or {}
    principal = state.get("principal")
    if not isinstance(principal, Principal):
        raise UnauthenticatedError("this MCP request carries no authenticated principal")
    return principal


def bind_principal(principal: Principal) -> None:
    """Make ``principal`` the one of the current request (and of the tasks it starts)."""
    _current.set(principal)


def current_principal() -> Principal:
    """The principal bound for the current request.

    Raises:
        UnauthenticatedError: none is bound (an operation reached outside a request).
    """
    principal = _current.get()
    if principal is None:
        raise UnauthenticatedError("no principal is bound to this MCP request")
    return principal
