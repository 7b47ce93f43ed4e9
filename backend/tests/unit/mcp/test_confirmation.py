"""Confirmation tokens: bound to the tool, the arguments, the caller and a lifetime."""

from __future__ import annotations

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp import confirmation
from dynamic_tools.mcp.confirmation import Caller, ConfirmationTokens, accepted

KEY = b"k" * 44
ALICE = Caller("alice", "session-1")
ARGS = {"workflow_id": "old_trip", "remove": ["a", "b"]}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_800_000_000.0]
    monkeypatch.setattr(confirmation, "_now", lambda: now[0])
    return now


def why(error: pytest.ExceptionInfo[InvalidInputError]) -> str:
    assert error.value.violations[0]["path"] == "confirmation_token"
    return str(error.value.violations[0]["message"])


def test_a_token_confirms_its_own_call_until_it_expires(clock: list[float]) -> None:
    tokens = ConfirmationTokens(KEY, ttl_s=300)
    token, expires_at = tokens.issue("workflow.delete", ARGS, ALICE)
    assert expires_at == "2027-01-15T08:05:00+00:00"
    reordered = {"remove": ["a", "b"], "workflow_id": "old_trip", "dry_run": False}
    tokens.check(token, "workflow.delete", reordered, ALICE)  # key order and dry_run ignored
    tokens.check(token, "workflow.delete", {**ARGS, "confirmation_token": token}, ALICE)
    clock[0] += 299.9
    tokens.check(token, "workflow.delete", ARGS, ALICE)
    clock[0] += 0.1
    with pytest.raises(InvalidInputError) as expired:
        tokens.check(token, "workflow.delete", ARGS, ALICE)
    assert "expired" in why(expired)


@pytest.mark.parametrize(
    ("tool", "arguments", "caller"),
    [
        ("workflow.cancel", ARGS, ALICE),  # another tool
        ("workflow.delete", {**ARGS, "workflow_id": "book_flight"}, ALICE),  # a changed value
        ("workflow.delete", {**ARGS, "expected_version": "v1"}, ALICE),  # an added argument
        ("workflow.delete", ARGS, Caller("bob", "session-1")),  # another principal
        ("workflow.delete", ARGS, Caller("alice", "session-2")),  # another session
        ("workflow.delete", ARGS, Caller("alice", None)),  # no session
    ],
)
def test_a_token_confirms_nothing_else(
    clock: list[float], tool: str, arguments: dict[str, object], caller: Caller
) -> None:
    token, _ = ConfirmationTokens(KEY, ttl_s=300).issue("workflow.delete", ARGS, ALICE)
    with pytest.raises(InvalidInputError) as refused:
        ConfirmationTokens(KEY, ttl_s=300).check(token, tool, arguments, caller)
    assert "another call" in why(refused)


def test_another_key_a_forged_expiry_or_garbage_is_refused(clock: list[float]) -> None:
    tokens = ConfirmationTokens(KEY, ttl_s=300)
    token, _ = tokens.issue("workflow.delete", ARGS, ALICE)
    version, expiry, mac = token.split(".")
    extended = f"{version}.{int(expiry) + 3_600_000}.{mac}"
    for bad in (extended, "ct1.x.y", "nonsense", "ct1..", token + "."):
        with pytest.raises(InvalidInputError):
            tokens.check(bad, "workflow.delete", ARGS, ALICE)
    with pytest.raises(InvalidInputError):
        ConfirmationTokens(b"o" * 44, ttl_s=300).check(token, "workflow.delete", ARGS, ALICE)


def test_only_a_ticked_accept_confirms() -> None:
    key = confirmation.CONFIRM_KEY
    assert accepted({key: {"action": "accept", "content": {"confirm": True}}})
    assert not accepted({key: {"action": "accept", "content": {"confirm": False}}})
    assert not accepted({key: {"action": "decline"}})
    assert not accepted({key: {"action": "accept", "content": {"confirm": "yes"}}})
    assert not accepted({"other": {"action": "accept", "content": {"confirm": True}}})
    assert not accepted(None)
