"""The expression language of ``when`` and ``items``: the parser and the public entry points.

Text is parsed once into an immutable tree (``parse_expression``, cached by text) and
evaluated many times (``evaluate``). There is no ``eval``: a hand-written tokenizer
(``expression_tokens``) and this recursive-descent parser accept only the grammar of
``docs/expressions.md``, and the tree is walked by ``expression_eval``. Precedence, loosest
first::

    ||  or          left to right, short-circuit
    &&  and         left to right, short-circuit
    !   not         prefix
    == != < <= > >= in, not in     one comparison, no chaining
    +  -            left to right
    *  /  %         left to right
    -               prefix (negation)
    <unit>          postfix duration: 7 days, $n days, (1 + 2) hours
    literals, $references, f(...), [...], ( ... )

Limits: 2,000 characters, nesting depth 50 (``range()`` items: see ``expression_functions``).
"""

from __future__ import annotations

import functools
from typing import Any

from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.expression_ast import (
    UNITS,
    Binary,
    BinaryOp,
    Call,
    Constant,
    Duration,
    Expression,
    ListNode,
    Logical,
    Node,
    ReferenceNode,
    Unary,
    walk,
)
from dynamic_tools.engine.expression_eval import evaluate
from dynamic_tools.engine.expression_functions import FUNCTIONS, NONDETERMINISTIC
from dynamic_tools.engine.expression_tokens import Token, syntax_error, tokenize
from dynamic_tools.engine.references import Reference, describe

__all__ = [
    "MAX_DEPTH",
    "MAX_LENGTH",
    "Expression",
    "Reference",
    "evaluate",
    "parse_expression",
    "references",
]

MAX_LENGTH = 2_000
"""The longest expression text accepted, in characters."""

MAX_DEPTH = 50
"""The deepest nesting accepted (tree depth, and parentheses/prefix operators while parsing)."""

_CONSTANTS: dict[str, Any] = {
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "null": None,
    "None": None,
}
_COMPARISONS: dict[str, BinaryOp] = {op: op for op in ("==", "!=", "<", "<=", ">", ">=")}


def parse_expression(text: str, *, node_id: str | None = None) -> Expression:
    """Parse ``text`` into an ``Expression`` (cached: the same text parses once).

    Args:
        text: The expression, e.g. ``"$availability.seats_available > 0"``.
        node_id: The workflow node holding it, named in errors.

    Raises:
        ExpressionError: The text is not a valid expression or breaks a limit; ``position``
            is the 0-based offset of the problem.
    """
    if not isinstance(text, str):
        raise ExpressionError(
            f"an expression must be a string, not {describe(text)}",
            expression=repr(text),
            node_id=node_id,
        )
    try:
        return _parse_cached(text)
    except ExpressionError as error:
        raise error.with_node(node_id) from None


def references(expr: Expression) -> list[Reference]:
    """Every reference in ``expr``, in source order (for the validator)."""
    found = [node.reference for node, _ in walk(expr.root) if isinstance(node, ReferenceNode)]
    return sorted(found, key=lambda reference: reference.start)


@functools.lru_cache(maxsize=1024)
def _parse_cached(text: str) -> Expression:
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"the expression is {len(text):,} characters long; the limit is {MAX_LENGTH:,}",
            expression=text,
            position=MAX_LENGTH,
        )
    root = _Parser(text, tokenize(text)).parse()
    for node, depth in walk(root):
        if depth > MAX_DEPTH:
            raise ExpressionError(
                f"the expression nests deeper than {MAX_DEPTH} levels",
                expression=text,
                position=node.position,
            )
    return Expression(text=text, root=root)


class _Parser:
    """Recursive descent over the token list, one method per precedence level."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self._text = text
        self._tokens = tokens
        self._index = 0
        self._nesting = 0

    def parse(self) -> Node:
        if self._peek().kind == "end":
            raise syntax_error("empty expression", self._text, 0)
        node = self._expression()
        token = self._peek()
        if token.kind != "end":
            raise self._unexpected(token)
        return node

    def _expression(self) -> Node:
        self._enter()
        try:
            return self._or()
        finally:
            self._nesting -= 1

    def _or(self) -> Node:
        node = self._and()
        while token := self._accept("||", "or"):
            node = Logical("or", node, self._and(), token.position)
        return node

    def _and(self) -> Node:
        node = self._not()
        while token := self._accept("&&", "and"):
            node = Logical("and", node, self._not(), token.position)
        return node

    def _not(self) -> Node:
        token = self._accept("!", "not")
        if token is None:
            return self._comparison()
        self._enter()
        try:
            return Unary("not", self._not(), token.position)
        finally:
            self._nesting -= 1

    def _comparison(self) -> Node:
        node = self._additive()
        found = self._comparison_operator()
        if found is None:
            return node
        op, position = found
        node = Binary(op, node, self._additive(), position)
        again = self._comparison_operator()
        if again is not None:
            raise syntax_error(
                "comparisons cannot be chained; join them with && or and", self._text, again[1]
            )
        return node

    def _comparison_operator(self) -> tuple[BinaryOp, int] | None:
        token = self._peek()
        if token.kind == "op" and token.text in _COMPARISONS:
            self._index += 1
            return _COMPARISONS[token.text], token.position
        if token.kind == "name" and token.text == "in":
            self._index += 1
            return "in", token.position
        after = self._tokens[self._index + 1] if token.kind != "end" else token
        if token.kind == "name" and token.text == "not" and after.text == "in":
            self._index += 2
            return "not in", token.position
        return None

    def _additive(self) -> Node:
        node = self._multiplicative()
        while token := self._accept("+", "-"):
            op: BinaryOp = "+" if token.text == "+" else "-"
            node = Binary(op, node, self._multiplicative(), token.position)
        return node

    def _multiplicative(self) -> Node:
        node = self._negation()
        while token := self._accept("*", "/", "%"):
            op: BinaryOp = "*" if token.text == "*" else "/" if token.text == "/" else "%"
            node = Binary(op, node, self._negation(), token.position)
        return node

    def _negation(self) -> Node:
        token = self._accept("-")
        if token is None:
            return self._duration()
        self._enter()
        try:
            return Unary("-", self._negation(), token.position)
        finally:
            self._nesting -= 1

    def _duration(self) -> Node:
        node = self._primary()
        token = self._peek()
        if token.kind == "name" and token.text in UNITS:
            self._index += 1
            return Duration(node, UNITS[token.text], token.position)
        return node

    def _primary(self) -> Node:
        token = self._advance()
        if token.kind in ("number", "string"):
            return Constant(token.value, token.position)
        if token.kind == "ref":
            return ReferenceNode(token.value, token.position)
        if token.kind == "name":
            return self._name(token)
        if token.text == "(":
            node = self._expression()
            self._expect(")", f"to close the '(' at position {token.position}")
            return node
        if token.text == "[":
            return ListNode(self._items("]"), token.position)
        raise self._unexpected(token)

    def _name(self, token: Token) -> Node:
        name = token.text
        if name in _CONSTANTS:
            return Constant(_CONSTANTS[name], token.position)
        if name in FUNCTIONS:
            self._expect("(", f"after the function name {name!r}")
            args = self._items(")")
            problem = FUNCTIONS[name].arity_problem(len(args))
            if problem:
                raise syntax_error(problem, self._text, token.position)
            return Call(name, args, token.position)
        if name in NONDETERMINISTIC:
            detail = f"{name}() is not available: runs must be deterministic, so pass the value in"
            raise syntax_error(f"{detail} as a parameter", self._text, token.position)
        if name in UNITS:
            raise syntax_error(
                f"{name!r} must follow a number, as in '7 {name}'", self._text, token.position
            )
        if name in ("and", "or", "not", "in"):
            raise self._unexpected(token)
        known = ", ".join(sorted(FUNCTIONS))
        raise syntax_error(
            f"unknown name {name!r}: references start with '$' (${name}), "
            f"and the functions are {known}",
            self._text,
            token.position,
        )

    def _items(self, closer: str) -> tuple[Node, ...]:
        items: list[Node] = []
        if self._accept(closer):
            return ()
        while True:
            items.append(self._expression())
            if self._accept(closer):
                return tuple(items)
            self._expect(",", f"or {closer!r}")

    def _enter(self) -> None:
        self._nesting += 1
        if self._nesting > MAX_DEPTH:
            detail = f"the expression nests deeper than {MAX_DEPTH} levels"
            raise syntax_error(detail, self._text, self._peek().position)

    def _peek(self) -> Token:
        return self._tokens[self._index]

    def _advance(self) -> Token:
        token = self._tokens[self._index]
        if token.kind != "end":
            self._index += 1
        return token

    def _accept(self, *texts: str) -> Token | None:
        token = self._peek()
        if token.kind in ("op", "name") and token.text in texts:
            self._index += 1
            return token
        return None

    def _expect(self, text: str, why: str) -> None:
        token = self._peek()
        if token.kind == "op" and token.text == text:
            self._index += 1
            return
        raise syntax_error(
            f"expected {text!r} {why}, found {token.shown()}", self._text, token.position
        )

    def _unexpected(self, token: Token) -> ExpressionError:
        return syntax_error(f"unexpected {token.shown()}", self._text, token.position)
