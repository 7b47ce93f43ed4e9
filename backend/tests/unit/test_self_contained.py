"""The repository explains itself: no file cites a design document that is not in it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUTSIDE = re.compile(
    r"\b(DESIGN|DURABILITY|SELECTION|STYLE|MCP|UI)\.md\b|§|\bshared/seeds\b|\.\./shared\b"
)
SUFFIXES = {".py", ".md", ".ts", ".tsx", ".yaml", ".yml", ".toml", ".json", ".sh", ".xml"}


def _tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):  # not a git checkout: every file but deps
        skip = {"node_modules", ".venv", ".git", "dist"}
        listed = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if not skip & set(p.relative_to(ROOT).parts)
        ]
    return [ROOT / name for name in listed if Path(name).suffix in SUFFIXES or name == "Makefile"]


def test_no_file_cites_a_document_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        if not path.is_file() or "package-lock" in path.name:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line) and path.name != "test_self_contained.py":
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert offenders == []


SEED_CITATION = re.compile(r"\bseeds? 00\d")


def test_only_design_sources_names_the_design_documents_by_number() -> None:
    """Code and docs cite docs/design-sources.md, never a design document's number."""
    offenders = []
    for path in _tracked_files():
        if not path.is_file() or path.name in ("design-sources.md", "test_self_contained.py"):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if SEED_CITATION.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert offenders == []
