"""The README's layout and docs/architecture.md name what exists.

Every path and module they name in backticks is in the repository (a ``module.py:name`` also
defines ``name``), and the pipeline stages they list are the pipeline's, in its order.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from dynamic_tools.selection.models import ErrorStage

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "backend" / "src" / "dynamic_tools"
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PATH_LIKE = re.compile(
    r"^(?P<path>[\w.-]+(?:/[\w.-]+)*(?:\.(?:py|md|toml|ts|tsx|json|ya?ml|conf)|/))"
    r"(?::(?P<name>[\w.]+))?$"
)


def _section(text: str, heading: str) -> str:
    """From ``heading`` to the next heading of its level or above."""
    start = text.index(heading)
    level = heading.split(" ")[0]
    ends = [text.find(f"\n{h} ", start + len(heading)) for h in ("#", "##", "###")[: len(level)]]
    end = min((e for e in ends if e >= 0), default=-1)
    return text[start : end if end >= 0 else None]


def _named_paths(text: str) -> list[tuple[str, str | None]]:
    found = []
    for token in re.findall(r"`([^`\n]+)`", text):
        match = PATH_LIKE.match(token.strip())
        if (match and "/" in match["path"]) or (match and match["path"].endswith(".py")):
            found.append((match["path"], match["name"]))
    return found


def _resolve(path: str, *within: Path) -> Path | None:
    for base in (*within, ROOT, ROOT / "backend", SRC, ROOT / "docs"):
        if (base / path).exists():
            return base / path
    if "/" not in path:  # a bare module name, named beside its package
        return next(iter(sorted(SRC.rglob(path))), None)
    return None


def _missing(text: str, *within: Path) -> list[str]:
    missing = []
    for path, name in _named_paths(text):
        found = _resolve(path, *within)
        if found is None:
            missing.append(path)
        elif name is not None:
            source = found.read_text(encoding="utf-8")
            last = name.split(".")[-1]
            defined = (
                rf"^\s*(?:(?:async def|def|class)\s+{re.escape(last)}\b|{re.escape(last)}\s*[:=])"
            )
            if not re.search(defined, source, re.M):
                missing.append(f"{path}:{name}")
    return missing


def test_every_path_the_readme_layout_names_exists() -> None:
    """A row's other paths are inside the folder its first cell names."""
    layout = _section(README.read_text(encoding="utf-8"), "## Architecture")
    assert len(_named_paths(layout)) > 20
    missing = []
    for row in re.findall(r"^\| (`[^|]+`) \|(.*)\|$", layout, re.M):
        folders = [p for p, _ in _named_paths(row[0])]
        missing += _missing(row[0])
        missing += _missing(row[1], *(ROOT / f for f in folders if f.endswith("/")))
    assert missing == []
    assert _missing(layout.split("| folder |")[0]) == []


def test_every_path_and_module_docs_architecture_names_exists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert len(_named_paths(text)) > 50
    assert _missing(text) == []


def test_the_stages_docs_architecture_lists_are_the_pipeline_s() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    listed = text.split("<!-- pipeline-stages -->")[1].split("<!-- /pipeline-stages -->")[0]
    stages = re.findall(r"^- `(\w+)`", listed, re.M)
    assert stages == list(get_args(ErrorStage))


def test_the_stages_the_readme_describes_are_the_pipeline_s() -> None:
    section = _section(README.read_text(encoding="utf-8"), "### How the pipeline behaves")
    stages = re.findall(r"^\| `(\w+)` \|", section, re.M)
    assert stages == list(get_args(ErrorStage))


def test_every_path_and_module_docs_design_sources_names_exists() -> None:
    text = (ROOT / "docs" / "design-sources.md").read_text(encoding="utf-8")
    assert len(_named_paths(text)) > 50
    assert _missing(text) == []
