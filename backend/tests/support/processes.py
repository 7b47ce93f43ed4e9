"""Real ``dynamic-tools serve`` processes for end-to-end tests, and a bounded wait."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

CLI = str(Path(sys.executable).with_name("dynamic-tools"))


@contextmanager
def server(port: int, env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``dynamic-tools serve`` on 127.0.0.1:``port`` until the block ends (killed if alive).

    Its output goes to ``log``; it is ready when ``/healthz`` answers (30 s at most).
    """
    full_env = {**os.environ, "LOG_LEVEL": "WARNING", "OPENAI_API_KEY": "", **env}
    with log.open("ab") as out:
        process = subprocess.Popen(
            [CLI, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=full_env,
            stdout=out,
            stderr=out,
        )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"server on {port} did not start: {log.read_text()[-2000:]}")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def until(check: Callable[[], Any], timeout: float = 30) -> Any:
    """The first truthy value of ``check()``, polled every 50 ms; AssertionError after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


__all__ = ["CLI", "server", "until"]
