"""Waiting on a condition in async tests, bounded: never a fixed sleep standing for "by now"."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(check: Callable[[], object], what: str, *, timeout: float = 10.0) -> None:
    """Return once ``check()`` is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.01)
