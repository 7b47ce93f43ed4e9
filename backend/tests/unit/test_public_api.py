"""The ``__all__`` of every module that declares one is pinned: changing a public surface is a
deliberate act (update tests/fixtures/public_api.json with ``UPDATE_PUBLIC_API=1``)."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil

import dynamic_tools
from tests.conftest import FIXTURES

PINNED = FIXTURES / "public_api.json"


def public_api() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for info in pkgutil.walk_packages(dynamic_tools.__path__, "dynamic_tools."):
        if info.name.startswith("dynamic_tools.persistence.migrations"):
            continue
        module = importlib.import_module(info.name)
        names = getattr(module, "__all__", None)
        if names is not None:
            found[info.name] = sorted(names)
    return dict(sorted(found.items()))


def test_public_modules_export_what_is_pinned() -> None:
    current = public_api()
    if os.environ.get("UPDATE_PUBLIC_API") == "1":
        PINNED.write_text(json.dumps(current, indent=2) + "\n")
    assert current == json.loads(PINNED.read_text())


def test_every_exported_name_exists() -> None:
    for name, exported in public_api().items():
        module = importlib.import_module(name)
        missing = [n for n in exported if not hasattr(module, n)]
        assert missing == [], f"{name} exports names it does not define: {missing}"


def test_every_engine_module_declares_its_public_names() -> None:
    engine = importlib.import_module("dynamic_tools.engine")
    for info in pkgutil.iter_modules(engine.__path__, "dynamic_tools.engine."):
        assert hasattr(importlib.import_module(info.name), "__all__"), info.name
    for name in ("dynamic_tools.errors", "dynamic_tools.violations", "dynamic_tools.http.invoker"):
        assert hasattr(importlib.import_module(name), "__all__"), name
