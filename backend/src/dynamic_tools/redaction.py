"""The one redaction rule: a credential's value is never recorded or shown, in any form.

Every value that leaves a call — an API's answer (body, headers, GraphQL errors), an error
message, a log line, a span — passes through a :class:`Redactor` before it is stored, logged,
traced, streamed or returned. A redactor knows a set of secret values and replaces each of them
with ``***`` wherever it appears, also in the forms an API that echoes a request produces:

- the value itself (``Bearer abc…``, ``abc…``);
- URL-encoded (``quote`` with and without ``/`` kept, ``quote_plus``), as a query string or a
  form body echoes it;
- base64 and URL-safe base64 at each of the three byte alignments a value can start at inside a
  larger encoded text (an echoed ``Authorization: Basic …`` header, a whole request encoded);
- JSON-escaped (a value holding quotes, backslashes or non-ASCII, echoed inside a JSON text).

Which values: the server's own (settings: the LLM key, the API token, the session key), every
tool secret from the moment it is looked up (:data:`redactor`, process-wide), and per call the
values of that call's secrets and of the MCP session's outbound headers
(:meth:`Redactor.with_values`). Values shorter than :data:`MIN_SECRET_CHARS` are ignored: they
would mangle ordinary text. A text cut at a size limit may end with the first characters of a
secret: :meth:`Redactor.scrub` with ``cut=True`` masks such a tail too.

Walking structures is iterative (an API's answer may nest deeply): no recursion on outside data.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "Redactor",
    "header_secrets",
    "redactor",
    "secret_forms",
]

MASK = "***"
#: values shorter than this are not secrets worth masking (they would mangle ordinary text)
MIN_SECRET_CHARS = 4
#: base64 forms are matched only for values at least this long: shorter fragments (5 to 6
#: characters) turn up by chance in long encoded texts
MIN_ENCODED_CHARS = 8
#: a cut text's tail is masked when it is the first (at least this many) characters of a secret
MIN_TAIL_CHARS = 4

#: outbound headers whose values are not credentials: the engine's own idempotency key, content
#: negotiation and trace context (masking ``application/json`` would mangle every answer)
NON_SECRET_HEADERS = frozenset(
    {
        "accept",
        "accept-language",
        "content-type",
        "idempotency-key",
        "traceparent",
        "tracestate",
        "user-agent",
    }
)

_URLSAFE = str.maketrans("+/", "-_")


def _base64_fragments(raw: bytes) -> set[str]:
    """The base64 characters that depend only on ``raw``, at each of the three alignments.

    Inside a larger base64 text, ``raw`` starts at some byte offset; the characters that encode
    only its bits are the same whatever surrounds it. For offset ``k`` (0 to 2) they are the
    characters ``ceil(8k/6)`` to ``floor(8(k+n)/6)`` of the encoding of ``k`` zero bytes + raw.
    """
    fragments: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        start = -(-8 * offset // 6)
        end = 8 * (offset + len(raw)) // 6
        fragment = encoded[start:end]
        fragments.add(fragment)
        fragments.add(fragment.translate(_URLSAFE))
    return fragments


def secret_forms(value: str) -> set[str]:
    """``value`` and the forms an echoing API may show it in (URL-encoded, base64, JSON)."""
    if len(value) < MIN_SECRET_CHARS:
        return set()
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    escaped = json.dumps(value)[1:-1]
    forms.add(escaped)
    forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
    if len(value) >= MIN_ENCODED_CHARS:
        forms |= _base64_fragments(value.encode("utf-8"))
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


def header_secrets(headers: Mapping[str, str] | None) -> list[str]:
    """The values of outbound ``headers`` that are credentials (not :data:`NON_SECRET_HEADERS`)."""
    if not headers:
        return []
    return [v for k, v in headers.items() if k.lower() not in NON_SECRET_HEADERS]


class Redactor:
    """A set of secret values, and the scrubbing of text and structures that may hold them."""

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self._values: set[str] = set()
        self._forms: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()
        self.add(*values)

    def add(self, *values: str | None) -> None:
        """Remember secret values (values shorter than 4 characters are ignored)."""
        fresh = [v for v in values if v and len(v) >= MIN_SECRET_CHARS and v not in self._values]
        if not fresh:
            return
        with self._lock:
            for value in fresh:
                self._values.add(value)
                self._forms |= secret_forms(value)
            self._pattern = None

    def with_values(self, values: Iterable[str | None]) -> Redactor:
        """A redactor knowing these values as well as this one's (``self`` when none is new)."""
        fresh = [v for v in values if v and len(v) >= MIN_SECRET_CHARS and v not in self._values]
        if not fresh:
            return self
        with self._lock:
            known = list(self._values)
        return Redactor([*known, *fresh])

    def _compiled(self) -> re.Pattern[str] | None:
        pattern = self._pattern
        if pattern is None and self._forms:
            with self._lock:
                # longest first: a value that contains another is masked whole
                forms = sorted(self._forms, key=len, reverse=True)
                pattern = self._pattern = re.compile("|".join(map(re.escape, forms)))
        return pattern

    def scrub(self, text: str, *, cut: bool = False) -> str:
        """``text`` with every known secret (in every form) replaced by ``***``.

        ``cut``: the text was cut at a size limit, so its end may be a secret's beginning;
        such a tail is masked too.
        """
        pattern = self._compiled()
        if pattern is None:
            return text
        text = pattern.sub(MASK, text)
        if cut:
            text = self._scrub_tail(text)
        return text

    def _scrub_tail(self, text: str) -> str:
        for form in self._forms:
            for size in range(min(len(form) - 1, len(text)), MIN_TAIL_CHARS - 1, -1):
                if text.endswith(form[:size]):
                    return text[:-size] + MASK
        return text

    def scrub_any(self, value: Any) -> Any:
        """A copy of ``value`` with strings (and mapping keys) scrubbed inside dicts and lists.

        Iterative: a deeply nested answer is walked with an explicit stack.
        """
        if self._compiled() is None:
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if not isinstance(value, dict | list | tuple):
            return value
        root: list[Any] = [None]
        # (source container, destination, key in destination)
        stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
        while stack:
            source, parent, slot = stack.pop()
            if isinstance(source, str):
                parent[slot] = self.scrub(source)
            elif isinstance(source, dict):
                copy: dict[Any, Any] = {}
                parent[slot] = copy
                for key, item in source.items():
                    new_key = self.scrub(key) if isinstance(key, str) else key
                    copy[new_key] = None
                    stack.append((item, copy, new_key))
            elif isinstance(source, list | tuple):
                items: list[Any] = [None] * len(source)
                parent[slot] = items
                stack.extend((item, items, i) for i, item in enumerate(source))
            else:
                parent[slot] = source
        return _retuple(root[0], value)

    def __contains__(self, text: object) -> bool:
        """Whether ``text`` holds a known secret (in any form)."""
        pattern = self._compiled()
        return isinstance(text, str) and pattern is not None and pattern.search(text) is not None


def _retuple(copy: Any, original: Any) -> Any:
    """Tuples were copied as lists; only a top-level tuple is given back as a tuple."""
    if isinstance(original, tuple) and isinstance(copy, list):
        return tuple(copy)
    return copy


#: The process-wide redactor: the server's own secrets and every tool secret looked up so far.
redactor = Redactor()
