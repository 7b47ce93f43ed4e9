"""The one redaction rule: every form of a secret value is masked, in text and in structures."""

from __future__ import annotations

import base64
import contextlib
import json
from urllib.parse import quote, quote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from dynamic_tools.redaction import MASK, Redactor, header_secrets, redactor

SECRET = "s3cret/value+with=signs"


def test_the_value_and_its_url_encoded_and_json_escaped_forms_are_masked() -> None:
    scrub = Redactor([SECRET]).scrub
    for form in (SECRET, quote(SECRET, safe=""), quote(SECRET), quote_plus(SECRET)):
        assert scrub(f"before {form} after") == f"before {MASK} after"
    quoted = 'say "hi" \\ ok'
    escaped = json.dumps({"v": quoted})  # the value inside a JSON text kept as text
    assert quoted not in Redactor([quoted]).scrub(escaped)
    assert json.dumps(quoted)[1:-1] not in Redactor([quoted]).scrub(escaped)


@given(prefix=st.binary(max_size=7), suffix=st.binary(max_size=7))
@settings(max_examples=60, deadline=None)
def test_base64_of_a_longer_text_holding_the_secret_is_masked_at_any_offset(
    prefix: bytes, suffix: bytes
) -> None:
    r = Redactor([SECRET])
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(prefix + SECRET.encode() + suffix).decode()
        scrubbed = r.scrub(encoded)
        assert MASK in scrubbed
        # nothing left that decodes to the secret (the mask read as four base64 characters)
        readable = scrubbed.replace(MASK, "AAAA").replace("-", "+").replace("_", "/")
        for start in range(4):
            part = readable[start:]
            part = part[: len(part) - len(part) % 4]
            with contextlib.suppress(ValueError):
                assert SECRET.encode() not in base64.b64decode(part)


def test_a_basic_header_echoed_is_masked_whole() -> None:
    token = base64.b64encode(b"alice:pa55word-long").decode()
    r = Redactor(["pa55word-long", f"Basic {token}", token])  # as the request builder lists them
    assert r.scrub(f"Authorization: Basic {token}") == f"Authorization: {MASK}"
    assert r.scrub(token) == MASK  # the token alone (its base64 fragment)


def test_a_text_cut_inside_a_secret_loses_the_secret_s_beginning() -> None:
    r = Redactor([SECRET])
    assert r.scrub("body ... s3cret/va", cut=True) == f"body ... {MASK}"
    assert r.scrub("body ... s3cret/va") == "body ... s3cret/va"  # not cut: left as is
    assert r.scrub("the end.", cut=True) == "the end."


def test_structures_are_scrubbed_keys_included_and_deep_nesting_is_no_problem() -> None:
    r = Redactor([SECRET])
    value = {"a": [SECRET, {"b": f"x{SECRET}y", SECRET: 1}], "n": 3, "t": (SECRET,)}
    assert r.scrub_any(value) == {"a": [MASK, {"b": f"x{MASK}y", MASK: 1}], "n": 3, "t": [MASK]}
    deep: object = SECRET
    for _ in range(20_000):  # far past the recursion limit
        deep = [deep]
    out = r.scrub_any(deep)
    for _ in range(20_000):
        assert isinstance(out, list)
        out = out[0]
    assert out == MASK


def test_short_values_are_ignored_and_extension_keeps_the_shared_values() -> None:
    r = Redactor(["abc", None, ""])
    assert r.scrub("abc abc") == "abc abc"
    extended = r.with_values(["session-value-1"])
    assert extended.scrub("session-value-1") == MASK and r.scrub("session-value-1") != MASK
    assert r.with_values([]) is r


def test_session_header_values_are_secrets_except_negotiation_and_the_engine_s_own() -> None:
    headers = {
        "Authorization": "Bearer abc-123",
        "X-Session": "tok-9",
        "Accept": "application/json",
        "Idempotency-Key": "run:node",
        "traceparent": "00-1-2-01",
    }
    assert header_secrets(headers) == ["Bearer abc-123", "tok-9"]
    assert header_secrets(None) == []


def test_the_process_wide_redactor_is_a_redactor() -> None:
    assert isinstance(redactor, Redactor)
