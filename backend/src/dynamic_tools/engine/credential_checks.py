"""Refusing literal credentials in a workflow's call arguments, before any run.

A workflow document is stored, shown and journaled: a credential written into it would be
too. A call's (or a sub-workflow's) literal argument value of a known token shape — a JWT,
``Bearer …``, ``sk-…``, ``AKIA…``, ``Basic <base64>``
(:func:`~dynamic_tools.literal_credentials.token_shape`) — is refused at validation, naming the
node and the argument, nested ones included (``rest_call`` headers and body). References stay
allowed: ``"Bearer $token"`` takes the token from a param at run time, and only the text around
the references is judged.

A ``rest_call`` carries no secrets at all, so a header or query name that looks like a
credential (``Authorization``, ``X-API-Key``) is refused here too, whatever its value — the
run would refuse it anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dynamic_tools.engine.references import REFERENCE_PATTERN
from dynamic_tools.literal_credentials import (
    HOW_TO_STORE,
    find_literal_credentials,
    looks_like_credential,
)

__all__ = ["CredentialProblem", "credential_problems"]


@dataclass(frozen=True)
class CredentialProblem:
    """A literal credential at ``where`` (a path inside the call's ``args``)."""

    where: tuple[str | int, ...]
    rule: str
    message: str


def credential_problems(tool: str, args: Mapping[str, Any]) -> list[CredentialProblem]:
    """Every literal credential in the ``args`` of a call of ``tool`` (empty: none)."""
    problems: list[CredentialProblem] = []
    if tool == "rest_call":
        for key in ("headers", "query"):
            names = args.get(key)
            if not isinstance(names, Mapping):
                continue
            for name in names:
                if looks_like_credential(str(name)):
                    problems.append(
                        CredentialProblem(
                            (key, str(name)),
                            "literal_credential",
                            f"rest_call {key} '{name}' looks like a credential, and a "
                            "rest_call carries no secrets: call a registered tool instead — "
                            f"{HOW_TO_STORE}",
                        )
                    )
    named = {problem.where for problem in problems}
    for finding in find_literal_credentials(args, literal=_without_references):
        if finding.path in named:
            continue
        argument = ".".join(str(part) for part in finding.path)
        rule = "max_depth" if finding.rule == "max_depth" else "literal_credential"
        if rule == "max_depth":
            message = f"{tool}.{argument} is {finding.what}; it cannot be checked"
        else:
            message = (
                f"{tool}.{argument} looks like {finding.what}, and a workflow document never "
                f"carries a credential: {HOW_TO_STORE}, and call that tool — or take the value "
                "as a workflow param and pass it as $name"
            )
        problems.append(CredentialProblem(finding.path, rule, message))
    return problems


def _without_references(text: str) -> str:
    """The literal text of a string: its ``$references`` are values of the run, not literals."""
    return REFERENCE_PATTERN.sub(" ", text)
