"""Example workflow documents of the tests, kept as files in tests/fixtures/workflows/."""

from __future__ import annotations

from pathlib import Path

import httpx

DRAFTS = Path(__file__).resolve().parents[1] / "fixtures" / "workflows" / "drafts"


def draft(name: str) -> str:
    """The text of ``drafts/<name>.yaml`` (a document an authoring client would send)."""
    return (DRAFTS / f"{name}.yaml").read_text()


def rewrite_saved_workflow(url: str, workflow_id: str, old: str, new: str) -> None:
    """Change a saved workflow's document over REST (``old`` → ``new``), as someone else would."""
    current = httpx.get(f"{url}/workflows/{workflow_id}").json()
    assert old in current["content"], old
    saved = httpx.put(
        f"{url}/workflows/{workflow_id}",
        json={
            "content": current["content"].replace(old, new),
            "expected_version": current["version"],
        },
    )
    assert saved.status_code == 200, saved.text
