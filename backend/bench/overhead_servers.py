"""The servers of ``bench.overhead``, each run in its own process by uvicorn.

``python -m bench.overhead_servers KIND CONFIG_JSON`` where KIND is one of:

- ``fakes``: the zero-latency fakes on one port, as plain ASGI (no framework, so they cost as
  little as possible): ``POST /v1/chat/completions`` answers a fixed ``get_quote`` tool call,
  ``GET /quote`` answers a fixed small JSON, ``GET /stats`` counts the calls received.
- ``app``: the real app, ``create_app(Settings(...))`` (side A).
- ``peer``: a minimal FastAPI endpoint making the same LLM call and the same GET (side B).

Every server is started the same way (:func:`serve`): one worker, log level WARNING, no
access log, uvicorn's default loop and HTTP implementation (uvloop and httptools here).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request

HOST = "127.0.0.1"
MODEL = "bench-model"
QUOTE = {"symbol": "ACME", "price": 123.45, "currency": "USD"}
TOOL_ARGUMENTS = {"symbol": "ACME"}


def serve(app: Any, port: int) -> None:
    """Serve ``app`` on 127.0.0.1:``port`` the way every side of the benchmark is served."""
    import uvicorn

    uvicorn.run(app, host=HOST, port=port, log_level="warning", log_config=None, access_log=False)


# --- fakes -------------------------------------------------------------------------------------


def _completion_body() -> bytes:
    answer = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "logprobs": None,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": "call_bench_0001",
                            "type": "function",
                            "function": {
                                "name": "get_quote",
                                "arguments": json.dumps(TOOL_ARGUMENTS),
                            },
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 210, "completion_tokens": 14, "total_tokens": 224},
    }
    return json.dumps(answer, separators=(",", ":")).encode()


class FakesApp:
    """The OpenAI-compatible LLM and the target API, answering at once with fixed bodies."""

    def __init__(self) -> None:
        self.completion = _completion_body()
        self.quote = json.dumps(QUOTE, separators=(",", ":")).encode()
        self.counts = {"llm": 0, "target": 0}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        more = True
        while more:  # drain the request body
            message = await receive()
            more = message.get("more_body", False)
        path, method = scope["path"], scope["method"]
        status = 200
        if path == "/v1/chat/completions" and method == "POST":
            self.counts["llm"] += 1
            body = self.completion
        elif path == "/quote" and method == "GET":
            self.counts["target"] += 1
            body = self.quote
        elif path == "/stats":
            body = json.dumps(self.counts).encode()
        elif path == "/healthz":
            body = b'{"status":"ok"}'
        else:
            status, body = 404, b'{"error":"not found"}'
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


# --- side A: the real app ----------------------------------------------------------------------


def real_app(config: dict[str, Any]) -> Any:
    """``create_app(Settings(...))`` with the benchmark's registry, fake LLM and allow-list."""
    from dynamic_tools.api.app import create_app
    from dynamic_tools.settings import Settings

    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        host=HOST,
        port=config["port"],
        api_token=None,
        registry_config_path=Path(config["registry_config_path"]),
        data_dir=Path(config["data_dir"]),
        seed_examples_from=None,
        openai_api_key="bench-key",
        openai_base_url=config["llm_base_url"],
        llm_model=MODEL,
        llm_max_retries=0,
        llm_capabilities="required,named,auto,json_schema,json_object,strict,system,tool_definitions",
        allowed_target_hosts=["127.0.0.1"],
        enable_demo_api=False,
        log_level="WARNING",
        log_json=True,
    )
    return create_app(settings)


# --- side B: the minimal peer ------------------------------------------------------------------


def peer_app(config: dict[str, Any]) -> Any:
    """A bare endpoint: the same LLM call, ``json.loads`` of the arguments, the same GET.

    No validation, no registry, no SSRF guard, no formatting. The system prompt and the tools
    list are the ones side A sends, computed once by the benchmark and read at start.
    """
    import httpx
    import openai

    payload = json.loads(Path(config["payload_path"]).read_text(encoding="utf-8"))
    system_prompt: str = payload["system_prompt"]
    tools: list[dict[str, Any]] = payload["tools"]
    target_url: str = config["target_url"]
    clients: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        clients["llm"] = openai.AsyncOpenAI(
            api_key="bench-key", base_url=config["llm_base_url"], timeout=60.0, max_retries=0
        )
        clients["http"] = httpx.AsyncClient(timeout=30.0, trust_env=False)
        try:
            yield
        finally:
            await clients["http"].aclose()
            await clients["llm"].close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/workflow")
    async def workflow(request: Request) -> dict[str, Any]:
        body = await request.json()
        completion = await clients["llm"].chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": body["user_instructions"]},
            ],
            tools=tools,
            tool_choice="required",
            parallel_tool_calls=False,
        )
        call = completion.choices[0].message.tool_calls[0]
        arguments = json.loads(call.function.arguments)
        response = await clients["http"].get(target_url, params=arguments)
        return {
            "status": "success",
            "selected_tool": call.function.name,
            "raw_response": {"status_code": response.status_code, "body": response.json()},
        }

    return app


def main(argv: list[str]) -> None:
    """Start one server: ``KIND CONFIG_JSON``."""
    kind, config_path = argv
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    if kind == "fakes":
        app: Any = FakesApp()
    elif kind == "app":
        app = real_app(config)
    elif kind == "peer":
        app = peer_app(config)
    else:
        raise SystemExit(f"unknown server kind {kind!r}; use fakes, app or peer")
    serve(app, config["port"])


if __name__ == "__main__":
    main(sys.argv[1:])
