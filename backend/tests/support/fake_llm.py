"""A scripted OpenAI-compatible chat completions server (test code only).

The real ``openai`` client talks to it over loopback HTTP. Each request takes the next scripted
reply; when the script is empty, the ``fallback`` callable (if any) answers from the request.
Every request body is recorded so tests can search what the LLM was shown.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.support.servers import serve


@dataclass
class Reply:
    """One scripted answer."""

    kind: str  # tool_call | text | refusal | http_error
    name: str | None = None
    arguments: str | None = None
    content: str | None = None
    finish_reason: str | None = None
    status: int = 200
    extra_calls: list[tuple[str, str]] = field(default_factory=list)


def tool_call(
    name: str, arguments: dict[str, Any] | str, *, finish_reason: str = "tool_calls"
) -> Reply:
    """The model calls ``name`` with ``arguments`` (a dict, or raw text for broken JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply("tool_call", name=name, arguments=raw, finish_reason=finish_reason)


def text(content: str, *, finish_reason: str = "stop") -> Reply:
    """The model answers with text."""
    return Reply("text", content=content, finish_reason=finish_reason)


def refusal(message: str) -> Reply:
    """The model refuses."""
    return Reply("refusal", content=message, finish_reason="stop")


def http_error(status: int) -> Reply:
    """The endpoint fails with ``status``."""
    return Reply("http_error", status=status)


class FakeLLM:
    """The scripted server's state: queued replies and recorded requests."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fallback: Callable[[dict[str, Any]], Reply] | None = None
        self.base_url = ""
        self._lock = threading.Lock()

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self.replies.extend(replies)

    def reset(self) -> None:
        """Forget replies and requests."""
        with self._lock:
            self.replies.clear()
            self.requests.clear()
            self.headers.clear()
            self.fallback = None

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.replies:
                return self.replies.pop(0)
        if self.fallback is not None:
            return self.fallback(body)
        return text("no scripted reply left")

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> JSONResponse:
            body = await request.json()
            self.headers.append(dict(request.headers))
            reply = self.next_reply(body)
            if reply.kind == "http_error":
                return JSONResponse(
                    {"error": {"message": "scripted failure", "type": "server"}},
                    status_code=reply.status,
                )
            return JSONResponse(completion(body.get("model", "fake"), reply))

        return app


def completion(model: str, reply: Reply) -> dict[str, Any]:
    """A chat.completion object for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if reply.kind == "tool_call":
        calls = [(reply.name, reply.arguments), *reply.extra_calls]
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": n, "arguments": a},
            }
            for n, a in calls
        ]
    elif reply.kind == "refusal":
        message["refusal"] = reply.content
    else:
        message["content"] = reply.content
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


@contextmanager
def running_fake_llm() -> Iterator[FakeLLM]:
    """A fake LLM served on loopback; ``base_url`` ends in ``/v1``."""
    fake = FakeLLM()
    with serve(fake.app()) as url:
        fake.base_url = f"{url}/v1"
        yield fake


def answer(content: str = "answered", *, sql: str | None = None) -> Reply:
    """The model ends ``{prefix}_query``'s loop with its answer (and optional SQL)."""
    return tool_call("answer", {"answer": content, "sql": sql})
