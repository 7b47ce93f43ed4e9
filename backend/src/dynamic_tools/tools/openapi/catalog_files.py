"""Catalog files: ``catalogs/<name>.yaml`` configs and ``<name>.tools.json`` manifests.

See :mod:`dynamic_tools.tools.catalogs` for the format. This module only reads them, so the
registry can load catalog tools without importing the catalog service.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import yaml

from dynamic_tools.tools.loader import LoadResult, load_file
from dynamic_tools.violations import LoadProblem

CATALOG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
CATALOG_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
"""A catalog's tool name prefix."""
MANIFEST_SUFFIX = ".tools.json"


def load_catalog_tools(catalogs_dir: Path) -> LoadResult:
    """The tools of every enabled catalog in ``catalogs_dir`` (problems collected, not raised).

    Configs are read in file-name order; a config that does not parse, or whose manifest is
    missing, is a problem. Manifests are cached by file identity, so reloading a registry
    with a large unchanged catalog does not validate its tools again.
    """
    result = LoadResult()
    if not catalogs_dir.is_dir():
        return result
    for config_path in sorted(catalogs_dir.glob("*.yaml")):
        shown = f"catalogs/{config_path.name}"
        try:
            config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            result.problems.append(LoadProblem(file=shown, field="(file)", message=str(exc)))
            continue
        if not isinstance(config, dict) or not isinstance(config.get("manifest"), str):
            result.problems.append(LoadProblem(file=shown, field="manifest", message="missing"))
            continue
        if config.get("enabled") is False:
            continue
        manifest = catalogs_dir / Path(config["manifest"]).name
        loaded = load_manifest(manifest, catalogs_dir.parent)
        result.tools.extend(loaded.tools)
        result.problems.extend(loaded.problems)
    return result


_manifest_cache: dict[Path, tuple[tuple[int, int, int], LoadResult]] = {}
_cache_lock = threading.Lock()


def load_manifest(path: Path, display_root: Path) -> LoadResult:
    """The tools of one manifest, cached while the file is unchanged."""
    try:
        stat = path.stat()
    except OSError:
        shown = str(path.relative_to(display_root))
        return LoadResult(problems=[LoadProblem(file=shown, field="(file)", message="missing")])
    key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _manifest_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    loaded = load_file(path, display_root=display_root)
    with _cache_lock:
        _manifest_cache[path] = (key, loaded)
    return loaded


def read_config(path: Path) -> dict[str, Any] | None:
    """A catalog config as a mapping, or None when missing or unreadable."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None
