"""Argument names of the MCP authoring design the product also accepts (``docs/seed-names.md``).

Where the design names an argument differently from the product (``version`` for
``expected_version``, ``operation_id`` for ``run_id``, ``catalog_id`` for ``catalog``), a tool
takes both: each alias is a property of the tool's ``inputSchema`` (so strict argument checking
knows it) and is folded into the product's argument before the tool runs. The rules:

- an alias alone works like the product's name (after an optional conversion);
- an alias together with the product's name, or two aliases of one argument, must agree,
  otherwise the call fails with ``INVALID_INPUT`` naming both;
- ``one_of`` names arguments of which at least one must be given (a JSON Schema ``anyOf`` at
  the top of an input schema is refused by some model APIs, so this is checked here).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dynamic_tools.errors import InvalidInputError

Convert = Callable[[Any], Any]


@dataclass(frozen=True)
class Alias:
    """``name`` (the design's argument) stands for ``target`` (the product's)."""

    name: str
    target: str
    convert: Convert | None = None  # the alias's value → the product's value

    def value(self, given: Any) -> Any:
        """The product's value for ``given``."""
        return self.convert(given) if self.convert is not None else given


def apply_aliases(
    tool: str,
    arguments: dict[str, Any],
    aliases: Sequence[Alias],
    *,
    one_of: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """``arguments`` with every alias folded into its target (see the module docstring).

    Raises:
        InvalidInputError: an alias disagrees with its target (or another alias), or none of a
            ``one_of`` group was given.
    """
    missing = [group for group in one_of if not any(n in arguments for n in group)]
    if missing:
        raise InvalidInputError(
            f"the arguments of '{tool}' need "
            + "; ".join(" or ".join(f"'{n}'" for n in group) for group in missing),
            violations=[
                {
                    "path": group[0],
                    "rule": "required",
                    "message": "is required (or " + ", ".join(group[1:]) + ")",
                    "expected": list(group),
                }
                for group in missing
            ],
            context={"tool": tool},
        )
    resolved = dict(arguments)
    given_as: dict[str, str] = {}  # target → the name its value came from
    for target in {a.target for a in aliases}:
        if target in resolved:
            given_as[target] = target
    for alias in aliases:
        if alias.name not in resolved:
            continue
        raw = resolved.pop(alias.name)
        value = alias.value(raw)
        if alias.target in resolved and resolved[alias.target] != value:
            other = given_as.get(alias.target, alias.target)
            raise InvalidInputError(
                f"'{alias.name}' and '{other}' of '{tool}' name the same argument but disagree "
                f"({raw!r:.80} vs {resolved[alias.target]!r:.80}); give one of them",
                violations=[
                    {
                        "path": alias.name,
                        "rule": "alias",
                        "message": f"is another name for '{alias.target}' and disagrees with "
                        f"'{other}'",
                        "expected": resolved[alias.target],
                        "actual": raw,
                    }
                ],
                context={"tool": tool, "alias": alias.name, "argument": alias.target},
            )
        resolved[alias.target] = value
        given_as.setdefault(alias.target, alias.name)
    return resolved


def with_aliases(
    tool: str,
    operation: Callable[[dict[str, Any]], Awaitable[Any]],
    aliases: Sequence[Alias],
    *,
    one_of: Sequence[Sequence[str]] = (),
) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """``operation`` called with the aliases of ``tool`` folded in."""
    if not aliases and not one_of:
        return operation

    async def run(arguments: dict[str, Any]) -> Any:
        return await operation(apply_aliases(tool, arguments, aliases, one_of=one_of))

    return run


def alias_property(alias: Alias, schema: dict[str, Any], note: str = "") -> dict[str, Any]:
    """The ``inputSchema`` property of ``alias``: its target's schema, described as an alias."""
    described = {k: v for k, v in schema.items() if k not in ("description", "default")}
    described["description"] = (
        f"Another name for '{alias.target}' (the MCP authoring design's name){note}; give one "
        "of the two."
    )
    return described


__all__ = ["Alias", "alias_property", "apply_aliases", "with_aliases"]
