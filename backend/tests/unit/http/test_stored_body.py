"""A body is recorded within a budget measured on its stored (JSON) form."""

from __future__ import annotations

import base64
import hashlib
import json

from dynamic_tools.http.stored_body import StoredBody, stored_body

BUDGET = 10_000


def store(
    content: bytes, content_type: str = "application/json", *, cut: bool = False
) -> StoredBody:
    return stored_body(content, content_type, cut=cut, budget=BUDGET, max_depth=100)


def test_json_is_parsed_and_text_kept() -> None:
    assert store(b'{"a": [1, 2]}').value == {"a": [1, 2]}
    assert store(b"hello", "text/plain").value == "hello"
    assert store(b"not json", "application/json").value == "not json"


def test_nul_bytes_are_a_summary_not_six_bytes_each() -> None:
    content = b"\0" * 5_000_000
    body = store(content, "text/plain", cut=True)
    assert body.summarized and body.truncated
    summary = body.value
    assert summary["summarized"] is True and summary["size_bytes"] == 5_000_000
    assert summary["size_is_lower_bound"] is True
    assert summary["sha256"] == hashlib.sha256(content).hexdigest()
    assert base64.b64decode(summary["first_bytes_base64"]) == b"\0" * 64
    assert len(json.dumps(summary)) < 1000


def test_binary_media_types_and_invalid_utf8_are_summaries() -> None:
    assert store(b"\x89PNG\r\n\x1a\n....", "image/png").summarized
    assert store(bytes(range(128, 256)) * 10, "text/plain").summarized
    assert not store(b"a few\ttabs\nand lines\r\n", "text/plain").summarized
    assert not store(b"a=1&b=2", "application/x-www-form-urlencoded").summarized


def test_the_budget_is_measured_on_the_stored_form() -> None:
    # 4,000 characters that JSON stores as \u00XX escapes (six bytes each): over the budget
    text = "\x01ab" * 100 + "é" * 4000
    body = store(text.encode(), "text/plain")
    assert body.truncated and not body.summarized
    assert len(json.dumps(body.value)) <= BUDGET
    big = json.dumps({"items": ["x" * 100] * 200}).encode()  # 21 KB of JSON
    body = store(big)
    assert body.truncated and isinstance(body.value, str)
    assert len(json.dumps(body.value)) <= BUDGET


def test_a_form_answer_is_read_into_an_object() -> None:
    form = "application/x-www-form-urlencoded; charset=utf-8"
    body = store(b"access_token=at-1%2B2&token_type=bearer&scope=a&scope=b&empty=", form)
    assert body.value == {
        "access_token": "at-1+2",
        "token_type": "bearer",
        "scope": ["a", "b"],
        "empty": "",
    }
    assert store(b"access_token=abc", form, cut=True).value == "access_token=abc"
    many = "&".join(f"f{i}=1" for i in range(1001)).encode()
    assert store(many, form).value == many.decode()
