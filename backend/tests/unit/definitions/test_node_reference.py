"""docs/node-kinds.md is generated from the node models and kept fresh."""

from __future__ import annotations

from pathlib import Path

from dynamic_tools.definitions.node_reference import KINDS, node_kind_reference

DOC = Path(__file__).resolve().parents[4] / "docs" / "node-kinds.md"


def test_the_committed_reference_is_what_the_models_generate() -> None:
    assert DOC.read_text() == node_kind_reference(), "stale: run `make docs`"


def test_every_node_kind_of_the_loader_is_in_the_reference() -> None:
    from typing import get_args

    from dynamic_tools.engine.models import Node

    union = get_args(Node)[0]
    assert {m for _, m, _ in KINDS} == set(get_args(union))
    text = node_kind_reference()
    for kind, _, _ in KINDS:
        assert f"\n## {kind}\n" in text
