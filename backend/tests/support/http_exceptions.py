"""Every exception the HTTP stack can raise, for property tests (hypothesis strategies).

The classes are collected from the modules a send goes through (httpx, httpcore, h11, anyio,
ssl, socket) and the builtins they raise (UnicodeEncodeError, ValueError, OSError and its
family...), plus arbitrary new ``Exception`` subclasses made up by hypothesis. Each is turned
into an instance with whatever constructor arguments its class needs.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import socket
import ssl
from types import ModuleType
from typing import Any

import anyio
import h11
import httpcore
import httpx
from hypothesis import strategies as st

_MODULES: tuple[ModuleType, ...] = (httpx, httpcore, h11, anyio, ssl, socket)
_BUILTINS = (
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "RuntimeError",
    "RecursionError",
    "OverflowError",
    "ZeroDivisionError",
    "AssertionError",
    "NotImplementedError",
    "UnicodeEncodeError",
    "UnicodeDecodeError",
    "UnicodeError",
    "LookupError",
    "EOFError",
    "OSError",
    "ConnectionError",
    "ConnectionResetError",
    "ConnectionRefusedError",
    "ConnectionAbortedError",
    "BrokenPipeError",
    "TimeoutError",
    "PermissionError",
    "FileNotFoundError",
    "InterruptedError",
    "BlockingIOError",
    "MemoryError",
    "BufferError",
    "StopAsyncIteration",
)


def exception_types() -> list[type[Exception]]:
    """Every ``Exception`` subclass the modules of a send define, and the builtins above."""
    found: dict[str, type[Exception]] = {}
    for module in _MODULES:
        for name in dir(module):
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, Exception):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    for name in _BUILTINS:
        found[f"builtins.{name}"] = getattr(builtins, name)
    found["asyncio.IncompleteReadError"] = asyncio.IncompleteReadError
    return [found[key] for key in sorted(found)]


def instantiate(cls: type[Exception], message: str) -> Exception:
    """An instance of ``cls`` carrying ``message`` where its constructor allows."""
    if issubclass(cls, UnicodeEncodeError):
        return cls("ascii", message + "é", len(message), len(message) + 1, "not ASCII")
    if issubclass(cls, UnicodeDecodeError):
        return cls("utf-8", message.encode() + b"\xff", len(message), len(message) + 1, "bad")
    if issubclass(cls, asyncio.IncompleteReadError):
        return cls(message.encode(), 10)
    if issubclass(cls, httpx.HTTPStatusError):
        request = httpx.Request("GET", "https://api.example/")
        return cls(message, request=request, response=httpx.Response(500, request=request))
    for args in ((message,), (), (1, message), (message, None)):
        try:
            return cls(*args)
        except Exception:  # try the next signature
            continue
    instance = cls.__new__(cls)  # a constructor with odd arguments: skip it, keep the type
    instance.args = (message,)
    return instance


def made_up_exception(name: str, message: str) -> Exception:
    """An instance of a new ``Exception`` subclass nobody has seen before."""
    cls = type(name, (Exception,), {})
    return cls(message)


_identifier = st.from_regex(r"[A-Z][A-Za-z0-9]{0,20}Error", fullmatch=True)


def http_stack_exceptions(message: st.SearchStrategy[str] | None = None) -> Any:
    """A hypothesis strategy of exception instances (known classes and made-up ones)."""
    text = message if message is not None else st.text(max_size=60)
    known = st.builds(instantiate, st.sampled_from(exception_types()), text)
    return st.one_of(known, st.builds(made_up_exception, _identifier, text))
