"""Recognising a credential written as a literal value, wherever a document may hold one.

Tool configs (static params, bodies, URLs) and workflow documents (a call's arguments) never
carry a credential: a credential is a *tool secret*, referenced as ``secret:NAME`` by a tool's
``auth`` (README, "Tool configs"). This module says when a value looks like one:

- :func:`token_shape`: a value of a known token shape — ``Bearer <token>``, ``Basic <base64 of
  user:password>``, a JSON Web Token, an ``sk-``/``sk_live_`` secret key, an AWS access key id
  (``AKIA…``/``ASIA…``), GitHub, Slack and Google API keys, a PEM private key;
- :func:`looks_like_credential`: a header or query *name* that suggests its value is one;
- :func:`looks_like_credential_field`: a body field name and value that are one (matched by
  word, so ``max_tokens: 256`` or ``tokenizer: cl100k`` are ordinary fields);
- :func:`find_literal_credentials`: every such value in a nested document, walked with an
  explicit stack and a depth limit (no recursion on outside data).

Nothing here repeats a value it found: a finding names the path and the shape only.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dynamic_tools.settings import TOOL_SECRET_ENV_PREFIX

__all__ = [
    "HOW_TO_STORE",
    "MAX_DEPTH",
    "Finding",
    "find_literal_credentials",
    "looks_like_credential",
    "looks_like_credential_field",
    "token_shape",
]

MAX_DEPTH = 64
"""Deepest nesting walked; anything deeper is a finding of its own (it cannot be checked)."""

HOW_TO_STORE = (
    "store the value as a tool secret (the file NAME in SECRETS_DIR, or the environment "
    f"variable {TOOL_SECRET_ENV_PREFIX}NAME) and reference it as 'secret:NAME' in a tool's "
    "auth (README, 'Tool configs')"
)
"""What to do instead, said by every refusal."""

Path = tuple[str | int, ...]

# --- token shapes ---------------------------------------------------------------------------
# The whole value is an Authorization header's value.
_BEARER = re.compile(r"bearer\s+([A-Za-z0-9._~+/-]+=*)", re.IGNORECASE)
_BASIC = re.compile(r"basic\s+([A-Za-z0-9+/]+={0,2})", re.IGNORECASE)
# Found anywhere in the value (a URL path, a longer text). Each starts only where a token can
# (not inside a run of token characters), so a search stays linear in the value's length.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "a JSON Web Token",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\."),
    ),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----")),
    (
        "an AWS access key id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    (
        "a GitHub token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    ("a Slack token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}")),
)
# OpenAI (sk-…, sk-proj-…), Anthropic (sk-ant-…), Stripe (sk_live_…, rk_test_…): random
# characters, so at least one digit; a slug such as "sk-learn-tutorial" is not one.
_SECRET_KEY = re.compile(r"(?<![A-Za-z0-9_-])(?:sk|rk)[-_]([A-Za-z0-9_-]{16,})")


def token_shape(text: str) -> str | None:
    """The known credential shape of ``text`` (``"a bearer token"``...), or None."""
    value = text.strip()
    bearer = _BEARER.fullmatch(value)
    if bearer is not None and _random_enough(bearer.group(1)):
        return "a bearer token ('Bearer …')"
    basic = _BASIC.fullmatch(value)
    if basic is not None and _is_user_password(basic.group(1)):
        return "basic credentials ('Basic <base64 of user:password>')"
    for shape, pattern in _SHAPES:
        if pattern.search(value):
            return shape
    for match in _SECRET_KEY.finditer(value):
        if any(c.isdigit() for c in match.group(1)):
            return "a secret API key ('sk-…')"
    return None


def _random_enough(token: str) -> bool:
    """A token, not a word ("Bearer authentication"): 8+ characters with a digit, or 20+."""
    return len(token) >= 20 or (len(token) >= 8 and any(c.isdigit() for c in token))


def _is_user_password(encoded: str) -> bool:
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


# --- credential names -------------------------------------------------------------------------
# Header and query names, compared lower-case with '-', '_' and '.' removed ("X-API-Key" ->
# "xapikey"): any of these parts anywhere, or one of the exact names.
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
# Body field names, by their last word (or last two words joined): "access_token",
# "clientSecret", "api_key", "new_password" are credentials; "token_type", "max_tokens",
# "tokenizer", "signature_version" are not.
_FIELD_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "apikey",
        "credential",
        "credentials",
        "authorization",
        "privatekey",
        "accesskey",
        "secretkey",
        "sessionid",
        "cookie",
        "auth",
        "jwt",
        "bearer",
    }
)
_FIELD_ENDINGS = ("token", "secret", "password", "passwd", "passphrase", "apikey")
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pwd", "pass"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def looks_like_credential(name: str) -> bool:
    """Whether a header or query parameter name suggests its value is a credential."""
    flat = re.sub(r"[-_.\s]", "", name.lower())
    return flat in _CREDENTIAL_NAMES or any(part in flat for part in _CREDENTIAL_PARTS)


def looks_like_credential_field(name: str, value: Any) -> bool:
    """Whether a body field ``name: value`` is a literal credential.

    The value must be one: a non-empty string, or a number under a password name (YAML reads
    ``password: 123456`` as a number). Objects and lists are walked into, never judged by name.
    """
    words = [w.lower() for w in _WORD.findall(name)]
    if not words:
        return False
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return words[-1] in _PASSWORD_WORDS
    if not isinstance(value, str) or not value.strip():
        return False
    flat = "".join(words)
    return (
        words[-1] in _FIELD_WORDS
        or "".join(words[-2:]) in _FIELD_WORDS
        or flat.endswith(_FIELD_ENDINGS)
        or flat in _PASSWORD_WORDS
    )


# --- walking a document -----------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """A literal credential (or a part too deep to check) at ``path`` inside a value.

    ``rule`` is ``token_shape``, ``credential_field`` or ``max_depth``; ``what`` says what was
    seen ("a JSON Web Token") without repeating it.
    """

    path: Path
    rule: str
    what: str


def find_literal_credentials(
    value: Any,
    *,
    field_rule: Callable[[str, Any], bool] | None = None,
    literal: Callable[[str], str] | None = None,
    max_depth: int = MAX_DEPTH,
) -> list[Finding]:
    """Every literal credential in ``value`` (objects, lists, strings), in document order.

    Args:
        value: the document part to walk (a static body, a call's arguments).
        field_rule: ``(name, value) -> bool``, whether an object's field is a credential by
            its name (:func:`looks_like_credential_field` for bodies); None: shapes only.
        literal: the literal text of a string (a workflow drops its ``$references`` first:
            ``"Bearer $token"`` is a reference, not a token); None: the string as is.
        max_depth: nesting past this is a ``max_depth`` finding (it cannot be checked).
    """
    found: list[Finding] = []
    # (path, value, whether its field's name already makes it a credential)
    stack: list[tuple[Path, Any, bool]] = [((), value, False)]
    while stack:
        path, item, named = stack.pop()
        if named:
            found.append(Finding(path, "credential_field", "a credential-named field"))
        elif len(path) > max_depth:
            found.append(Finding(path, "max_depth", f"nested deeper than {max_depth} levels"))
        elif isinstance(item, Mapping):
            fields = [
                ((*path, str(key)), child, field_rule is not None and field_rule(str(key), child))
                for key, child in item.items()
            ]
            stack.extend(reversed(fields))  # popped in document order
        elif isinstance(item, list | tuple):
            stack.extend(reversed([((*path, i), child, False) for i, child in enumerate(item)]))
        elif isinstance(item, str):
            shape = token_shape(literal(item) if literal is not None else item)
            if shape is not None:
                found.append(Finding(path, "token_shape", shape))
    return found
