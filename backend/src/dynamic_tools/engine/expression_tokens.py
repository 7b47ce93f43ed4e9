r"""The tokenizer of the expression language: text to a flat list of tokens.

Token kinds: ``number`` (``42``, ``2.5``, ``1e3``), ``string`` (single or double quotes, with
the escapes ``\\ \' \" \/ \n \t \r \uXXXX``), ``ref`` (``$name.path``, read with the
same pattern as interpolation), ``name`` (keywords, function names, unit words, constants),
``op`` (operators and punctuation) and a final ``end``. Whitespace separates tokens and is
otherwise ignored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.references import REFERENCE_PATTERN, reference_from_match

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%")
_PUNCTUATION = ("(", ")", "[", "]", ",")
_MISTAKES = {"=": "'==' to compare", "&": "'&&' or 'and'", "|": "'||' or 'or'"}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "/": "/", "n": "\n", "t": "\t", "r": "\r"}

TokenKind = Literal["number", "string", "ref", "name", "op", "end"]


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, its text as written, its offset, and its value if a literal.

    ``value`` is the number or the unescaped string for literals and the ``Reference`` for
    ``ref`` tokens.
    """

    kind: TokenKind
    text: str
    position: int
    value: Any = None

    def shown(self) -> str:
        """The token as error messages show it."""
        return "end of expression" if self.kind == "end" else repr(self.text)


def tokenize(text: str) -> list[Token]:
    """``text`` as tokens, ending with an ``end`` token at ``len(text)``.

    Raises:
        ExpressionError: A character, string, number or ``$`` that no token can start with.
    """
    tokens: list[Token] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char in " \t\r\n":
            index += 1
            continue
        if char.isascii() and char.isdigit():
            token = _number(text, index)
        elif char in "'\"":
            token = _string(text, index)
        elif char == "$":
            match = REFERENCE_PATTERN.match(text, index)
            if match is None:
                raise syntax_error("'$' must be followed by a name, as in $origin", text, index)
            token = Token("ref", match.group(0), index, reference_from_match(match))
        elif match := _NAME.match(text, index):
            token = Token("name", match.group(0), index)
        else:
            symbol = next(
                (op for op in _OPERATORS + _PUNCTUATION if text.startswith(op, index)), ""
            )
            if not symbol:
                hint = f"; use {_MISTAKES[char]}" if char in _MISTAKES else ""
                raise syntax_error(f"unexpected {char!r}{hint}", text, index)
            token = Token("op", symbol, index)
        tokens.append(token)
        index = token.position + len(token.text)
    tokens.append(Token("end", "", len(text)))
    return tokens


def _number(text: str, start: int) -> Token:
    match = _NUMBER.match(text, start)
    assert match is not None  # the caller saw a digit
    literal = match.group(0)
    value: int | float = float(literal) if any(c in literal for c in ".eE") else int(literal)
    if isinstance(value, float) and not math.isfinite(value):
        raise syntax_error(f"the number {literal} is too large", text, start)
    return Token("number", literal, start, value)


def _string(text: str, start: int) -> Token:
    quote = text[start]
    chars: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == quote:
            return Token("string", text[start : index + 1], start, "".join(chars))
        if char != "\\":
            chars.append(char)
            index += 1
            continue
        code = text[index + 1 : index + 2]
        if code == "u":
            digits = text[index + 2 : index + 6]
            if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise syntax_error("'\\u' must be followed by four hex digits", text, index)
            chars.append(chr(int(digits, 16)))
            index += 6
        elif code in _ESCAPES:
            chars.append(_ESCAPES[code])
            index += 2
        else:
            raise syntax_error(f"unknown escape '\\{code}' in a string", text, index)
    raise syntax_error("unterminated string", text, start)


def syntax_error(detail: str, text: str, position: int) -> ExpressionError:
    """An ``ExpressionError`` about ``text`` at ``position``."""
    return ExpressionError(detail, expression=text, position=position)


__all__ = [
    "Token",
    "TokenKind",
    "syntax_error",
    "tokenize",
]
