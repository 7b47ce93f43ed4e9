"""Destructive tools say what they will remove, and act only once the caller confirmed it.

A destructive tool (``workflow.delete``, ``workflow.cancel``, ``workflow.purge_history``,
``catalog.remove``) has a *preview*: what the call would remove, computed without changing
anything (``summary`` is one sentence for a person). One rule holds on both protocol revisions
and every transport (``docs/mcp-conformance.md``, "Destructive tools"):

- ``dry_run: true`` answers the preview and changes nothing;
- a client that can answer is asked: an ``elicitation/create`` form on 2025-11-25, an
  ``InputRequiredResult`` carrying the form on 2026-07-28 (its ``requestState`` is a
  confirmation token, so the retry verifies on any replica). Accept goes ahead; decline,
  cancel or an unticked box answers ``confirmed: false`` and changes nothing;
- any other client gets the preview plus a ``confirmation_token`` and its ``expires_at``;
  only a second call with the same arguments carrying that token acts.

A token is an HMAC, under a key derived from the server's session key (so every replica given
the same ``SESSION_KEY`` verifies it), over the tool, the canonical JSON of the arguments (minus
``confirmation_token`` and ``dry_run``), the principal, the MCP session (when there is one) and
the expiry (``MCP_CONFIRMATION_TTL_S``). A changed argument, another caller, another session or
an expired token is refused and nothing changes. Within its lifetime a token confirms the same
call again (the tools are idempotent; a repeated purge removes only what ended since).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import mcp_types as types

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.channel import CallChannel
from dynamic_tools.mcp.entries import Result, ToolCall
from dynamic_tools.mcp.errors import invalid_params
from dynamic_tools.mcp.results import data_result

Preview = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

TOKEN_ARGUMENT = "confirmation_token"
CONFIRM_KEY = "confirm_destructive"  # the inputRequests key of a 2026-07-28 confirmation
_VERSION = "ct1"
_MAX_TOKEN = 200

DRY_RUN = {
    "type": "boolean",
    "default": False,
    "description": "Only say what would be removed; change nothing.",
}
CONFIRMATION_TOKEN = {
    "type": "string",
    "minLength": 1,
    "maxLength": _MAX_TOKEN,
    "description": "The token a first call without it answered (with the preview of what goes): "
    "call again with the same arguments plus this token to go ahead. Short-lived; bound to "
    "these arguments and to the caller.",
}
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Go ahead",
            "description": "Tick to confirm; this cannot be undone.",
            "default": False,
        }
    },
    "required": ["confirm"],
}


def _now() -> float:
    """The clock tokens are issued and checked against (tests replace it)."""
    return time.time()


@dataclass(frozen=True)
class Caller:
    """Who a token is bound to: the principal and, where there is one, the MCP session."""

    principal: str
    session: str | None


class ConfirmationTokens:
    """Issues and checks confirmation tokens under one server key."""

    def __init__(self, server_key: bytes, ttl_s: float) -> None:
        # A key of its own: a confirmation token never doubles as anything sealed elsewhere.
        self._key = hmac.new(server_key, b"dynamic-tools/mcp-confirmation", "sha256").digest()
        self.ttl_s = ttl_s

    def issue(self, tool: str, arguments: dict[str, Any], caller: Caller) -> tuple[str, str]:
        """A token for this call and caller, and when it expires (ISO 8601, UTC)."""
        expires_ms = int((_now() + self.ttl_s) * 1000)
        mac = self._mac(tool, arguments, caller, expires_ms)
        expires_at = datetime.fromtimestamp(expires_ms / 1000, UTC).isoformat()
        return f"{_VERSION}.{expires_ms}.{mac}", expires_at

    def check(self, token: str, tool: str, arguments: dict[str, Any], caller: Caller) -> None:
        """Nothing when ``token`` confirms this call by this caller, unexpired.

        Raises:
            InvalidInputError: it does not (the violation says why, at ``confirmation_token``).
        """
        version, _, rest = token.partition(".")
        expiry, _, mac = rest.partition(".")
        if version != _VERSION or not expiry.isdigit() or len(expiry) > 16 or not mac:
            raise _refused("is not a confirmation token this server issued")
        expected = self._mac(tool, arguments, caller, int(expiry))
        if not hmac.compare_digest(mac, expected):
            raise _refused(
                "was issued for another call: the arguments, the caller or the session differ"
            )
        if _now() * 1000 >= int(expiry):
            raise _refused("has expired; call again without it for a new preview and token")

    def _mac(self, tool: str, arguments: dict[str, Any], caller: Caller, expires_ms: int) -> str:
        bound = json.dumps(
            [tool, bound_arguments(arguments), caller.principal, caller.session or "", expires_ms],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
            default=str,
        )
        digest = hmac.new(self._key, bound.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def gate(
    tokens: ConfirmationTokens, tool: str, preview: Preview, call: ToolCall
) -> Result | None:
    """A destructive call's answer when it must not act (yet); None when it may go ahead.

    ``call.arguments`` lose ``dry_run`` and ``confirmation_token`` (the handler never sees
    them).

    Raises:
        InvalidInputError: a ``confirmation_token`` that does not confirm this call; the
            preview's own errors (an unknown workflow, an ended run …).
        MCPError: a ``requestState`` that does not confirm this call (``-32602``, as the
            2026-07-28 revision wants for state a server cannot accept).
    """
    channel, arguments = call.channel, call.arguments
    dry_run = bool(arguments.pop("dry_run", False))
    token = arguments.pop(TOKEN_ARGUMENT, None)
    caller = Caller(channel.principal.id, channel.session_id)
    if channel.modern and channel.request_state and not dry_run:  # the answer to our question
        try:
            tokens.check(channel.request_state, tool, arguments, caller)
        except InvalidInputError as exc:  # a tampered or foreign requestState: a request error
            where = [{**v, "path": "requestState"} for v in exc.violations]
            raise invalid_params(InvalidInputError(exc.message, violations=where)) from None
        if accepted(channel.input_responses):
            return None
        return data_result(not_confirmed(await preview(dict(arguments))))
    if token is not None and not dry_run:
        tokens.check(str(token), tool, arguments, caller)
        return None
    plan = await preview(dict(arguments))
    if dry_run:
        return data_result({**plan, "dry_run": True, "changed": False})
    summary = str(plan.get("summary", ""))
    if channel.modern and channel.elicits:
        return input_required(tool, summary, tokens.issue(tool, arguments, caller)[0])
    answer = await confirmed(channel, tool, summary)
    if answer is True:
        return None
    if answer is False:
        return data_result(not_confirmed(plan))
    issued, expires_at = tokens.issue(tool, arguments, caller)
    return data_result(needs_token(plan, tool, issued, expires_at))


def bound_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a token is bound to: all but the token itself and ``dry_run``."""
    return {k: v for k, v in arguments.items() if k not in (TOKEN_ARGUMENT, "dry_run")}


def _refused(why: str) -> InvalidInputError:
    return InvalidInputError(
        f"{TOKEN_ARGUMENT} {why}: nothing was changed",
        violations=[{"path": TOKEN_ARGUMENT, "rule": "confirmation", "message": why}],
    )


async def confirmed(channel: CallChannel, tool: str, summary: str) -> bool | None:
    """Ask the user to confirm ``summary`` (2025-11-25): True, False (declined), None (cannot)."""
    if channel.elicit is None:
        return None
    answer = await channel.elicit(question(tool, summary), CONFIRM_SCHEMA)
    return answer.action == "accept" and bool((answer.content or {}).get("confirm"))


def question(tool: str, summary: str) -> str:
    """What the user is asked."""
    return f"{tool}: {summary} Go ahead?"


def input_required(tool: str, summary: str, token: str) -> types.InputRequiredResult:
    """The 2026-07-28 question: a confirmation form; the token rides as ``requestState``."""
    form = types.ElicitRequestFormParams(
        message=question(tool, summary), requested_schema=CONFIRM_SCHEMA
    )
    return types.InputRequiredResult(
        input_requests={CONFIRM_KEY: types.ElicitRequest(params=form)}, request_state=token
    )


def accepted(responses: dict[str, Any] | None) -> bool:
    """Whether a 2026-07-28 retry's input responses accept the confirmation form."""
    answer = (responses or {}).get(CONFIRM_KEY)
    if answer is None:
        return False
    dump = getattr(answer, "model_dump", None)
    data = dump(by_alias=True, exclude_none=True) if callable(dump) else answer
    if not isinstance(data, dict) or data.get("action") != "accept":
        return False
    content = data.get("content")
    return isinstance(content, dict) and content.get("confirm") is True


def not_confirmed(plan: dict[str, Any]) -> dict[str, Any]:
    """The answer when the user did not confirm: nothing changed."""
    return {
        **plan,
        "confirmed": False,
        "changed": False,
        "message": "Not confirmed by the user: nothing was changed.",
    }


def needs_token(plan: dict[str, Any], tool: str, token: str, expires_at: str) -> dict[str, Any]:
    """The two-step answer: what would go, and how to confirm it."""
    return {
        **plan,
        "confirmed": False,
        "changed": False,
        "confirmation_required": True,
        TOKEN_ARGUMENT: token,
        "expires_at": expires_at,
        "message": f"Nothing was changed yet. Show the user the summary; if they confirm, call "
        f"{tool} again with the same arguments plus {TOKEN_ARGUMENT} before {expires_at}.",
    }


__all__ = [
    "CONFIRMATION_TOKEN",
    "CONFIRM_KEY",
    "CONFIRM_SCHEMA",
    "DRY_RUN",
    "TOKEN_ARGUMENT",
    "Caller",
    "ConfirmationTokens",
    "Preview",
    "accepted",
    "bound_arguments",
    "confirmed",
    "gate",
    "input_required",
    "needs_token",
    "not_confirmed",
]
