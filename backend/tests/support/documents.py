"""Example workflow documents of the tests, kept as files in tests/fixtures/workflows/."""

from __future__ import annotations

from pathlib import Path

DRAFTS = Path(__file__).resolve().parents[1] / "fixtures" / "workflows" / "drafts"


def draft(name: str) -> str:
    """The text of ``drafts/<name>.yaml`` (a document an authoring client would send)."""
    return (DRAFTS / f"{name}.yaml").read_text()
