"""Scripted chat-completions servers that answer as llama.cpp, vLLM and Ollama do (test code only).

Each server is real HTTP on a free loopback port. What the *model* means to say comes from a
**brain** (a callable given what reached the model: :class:`Seen`); the **profile** turns that
into what that server puts on the wire: which request fields it honours, ignores or refuses,
which messages its chat template drops, its finish reasons, and its error bodies. Every request
body is recorded (``server.requests``) so tests can assert what was sent.

Tokens are counted as characters / 4 (rounded up) for the prompt (what reached the model) and
for the answer. Nothing sleeps; every answer is bounded (a "runaway" answer is cut at the
context window, as the real one is).

Facts relied on (server x field), each with its source
========================================================

llama-cpp-python ``llama_cpp.server`` (0.3.x; read at 0.3.35, checked back to 0.3.0/0.3.16)
  Sources: https://github.com/abetlen/llama-cpp-python/blob/main/llama_cpp/server/app.py ,
  .../llama_cpp/server/errors.py , .../llama_cpp/server/types.py , .../llama_cpp/server/model.py ,
  .../llama_cpp/llama_types.py , .../llama_cpp/llama_chat_format.py , .../llama_cpp/llama.py

- Every exception in the chat route, *including request validation*, is caught by
  ``RouteErrorHandler`` and answered **500** ``{"error": {"message": str(exc), "type":
  "internal_server_error", "param": null, "code": null}}``; the only exceptions mapped otherwise are
  "Requested tokens (N) exceed context window of M" → **400** ``{"error": {"message": "This
  model's maximum context length is M tokens. However, you requested N+max_tokens tokens (N in the
  messages, max_tokens in the completion). Please reduce the length of the messages or
  completion.", "type": "invalid_request_error", "param": "messages", "code":
  "context_length_exceeded"}}`` (raised when prompt tokens >= n_ctx; a max_tokens that does not
  fit is cut to n_ctx - prompt, not refused). A JSON validation failure is therefore a 500 whose
  message is FastAPI's "N validation error(s): ..." text (reported upstream as
  https://github.com/ggml-org/llama.cpp/issues/23463 for ``response_format: json_schema``).
- ``response_format.type`` is ``Literal["text", "json_object"]`` (optional ``schema``): so
  ``{"type": "json_object", "schema": S}`` is honoured with a grammar from S, ``json_object``
  alone with a JSON grammar, and ``{"type": "json_schema", ...}`` is **refused with 500**.
- Assistant messages: ``content: NotRequired[str]`` since 0.3.3 (PR #1807): ``content: null``
  is **refused with 500** (validation). Omitting ``content`` passes validation, but the simple
  formatters (``gemma``, ``chatml``, ...) read ``message["content"]`` → 500 ``"'content'"``,
  and ``chatml-function-calling``'s template (StrictUndefined) → 500 "'dict object' has no
  attribute 'content'". A string (``""``) works everywhere.
- Unknown fields (``parallel_tool_calls``, ``guided_json``, ...) are ignored (pydantic default).
- The model name is ignored: an unknown name falls back to the default model
  (``LlamaProxy.__call__``); the answer echoes the requested name.
- ``max_tokens`` is honoured (``finish_reason: "length"`` when reached); without it the model may
  write until the context window is full.
- Chat formats built from a formatter (``chat_formatter_to_chat_completion_handler``: the GGUF's
  Jinja template — what ``chat_format=None`` uses, here "default" — and ``gemma``, ``chatml``,
  ...): the output is never parsed for tool calls, so ``tools`` with ``tool_choice``
  "auto"/"required"/absent give plain text; a **named** ``tool_choice`` is honoured: a grammar
  from that function's parameters, answered as ``tool_calls`` (content null, finish_reason
  "tool_calls" even when cut by max_tokens); a named function not in ``tools`` → 500 "Tool choice
  'x' not found in tools.". Here "default" models a GGUF template that does not render tools.
- ``gemma``: system messages are dropped (logged only), only user/assistant ``content`` is
  rendered (tool messages and assistant ``tool_calls`` never reach the model).
- ``chatml-function-calling``: ``tool_choice`` absent/"none" or no tools → plain completion
  *without* the function list; named → forced call with a grammar (max_tokens honoured);
  "auto" → the model picks ``functions.<name>:`` or ``message:`` (temperature 0, max_tokens
  ignored), the message branch's grammar only allows ``<|im_end|>`` so a text answer comes back
  empty; "required" → ``assert tool_choice == "auto"`` fails → **500** with an empty message.
  Functions are listed in the *system* message (only when there is one); tool-role messages are
  not rendered; assistant ``tool_calls`` are rendered as ``functions.<name>:\\n<arguments>``.

vLLM OpenAI-compatible server (0.8.3+; docs and code read at main)
  Sources: https://docs.vllm.ai/en/latest/features/tool_calling.html ,
  https://docs.vllm.ai/en/latest/features/structured_outputs.html ,
  https://github.com/vllm-project/vllm/blob/main/vllm/entrypoints/openai/chat_completion/protocol.py
  (``check_tool_usage``), .../chat_completion/serving.py , .../engine/serving.py

- ``tool_choice`` named and "required" are always available (structured outputs): named →
  ``tool_calls`` with finish_reason **"stop"**; "required" → one or more calls, finish_reason
  "tool_calls". "none" → text. "auto" — also implied when ``tools`` is given without
  ``tool_choice`` — needs ``--enable-auto-tool-choice`` and ``--tool-call-parser``, else **400**
  ``'"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'``.
- Request errors are **400** ``{"error": {"message": ..., "type": "BadRequestError", "param":
  null, "code": 400}}``: ``tools: []``; ``tool_choice`` without ``tools``; an invalid
  ``tool_choice``; a named function not in ``tools`` ("The tool specified in `tool_choice` does
  not match any of the specified `tools`").
- ``response_format`` ``json_schema`` (with ``json_schema.schema``) and ``json_object`` are
  honoured; ``json_schema`` without the ``json_schema`` wrapper → **500** ``{"error":
  {"message": "", "type": "InternalServerError", "param": null, "code": 500}}``
  (https://github.com/vllm-project/vllm/issues/35438). The extra-body ``guided_json`` (vLLM ≤
  0.10; ``structured_outputs: {"json": ...}`` later) is honoured too.
- Unknown model → **404** ``{"error": {"message": "The model `x` does not exist.", "type":
  "NotFoundError", "param": null, "code": 404}}``.
- Prompt tokens >= max_model_len → 400 "This model's maximum context length is M tokens.
  However, your request has N input tokens. Please reduce the length of the input messages.";
  prompt + max_tokens > max_model_len → 400 "'max_tokens' or 'max_completion_tokens' is too
  large: ...".
- ``content: null`` on assistant messages is accepted (OpenAI's own message types).

Ollama OpenAI compatibility (``/v1/chat/completions``)
  Sources: https://github.com/ollama/ollama/blob/main/docs/openai.md (and
  https://docs.ollama.com/api/openai-compatibility),
  https://github.com/ollama/ollama/blob/main/openai/openai.go ,
  .../server/routes.go , .../server/prompt.go

- Request fields read: model, messages, stream, max_tokens (→ num_predict), seed, stop,
  temperature, frequency/presence_penalty, top_p, response_format, tools, reasoning. Everything
  else — ``tool_choice``, ``parallel_tool_calls``, ``n``, ``logit_bias``, ``user`` — is
  **ignored** (not in the request struct): with tools the model always decides ("auto").
- ``response_format``: ``json_object`` → JSON mode; ``json_schema`` → the schema as ``format``
  (constrained); other types ignored.
- Tool calls come back parsed (``tool_calls``, content "", finish_reason "tool_calls").
- A message whose ``content`` is null *and* has no ``tool_calls`` → **400** "invalid message
  content type: <nil>"; with tool_calls it is accepted.
- Errors are ``{"error": {"message", "type", "param": null, "code": null}}`` with type
  "invalid_request_error" (400), "not_found_error" (404), "api_error" (other). Unknown model →
  **404** ``model "x" not found, try pulling it first``.
- A prompt longer than the context (num_ctx) is **silently truncated**: the oldest messages are
  dropped, keeping system messages and the last message (logged at debug only).
"""

from __future__ import annotations

import copy
import json
import math
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired

import jsonschema
import yaml
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

from tests.support.servers import serve

TRAVEL_REQUESTS = Path(__file__).resolve().parents[1] / "fixtures" / "llm" / "travel_requests.yaml"
CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    """Tokens of ``text``, counted as characters / 4 rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


# --- what reached the model, and what it means to say ------------------------------------------


@dataclass(frozen=True)
class Function:
    """A function definition as the model was shown it."""

    name: str
    parameters: dict[str, Any]
    description: str = ""


@dataclass(frozen=True)
class Seen:
    """What reached the model after the server's template, and how its output is constrained.

    ``messages`` holds only what the template renders (``role``, ``content`` text, and
    ``tool_calls`` as ``[(name, arguments_text)]`` when rendered). ``tools`` are the definitions
    rendered into the prompt. ``forced``: the server forces a call to that function (grammar /
    guided decoding). ``must_call``: the server forces some call among ``tools``. ``schema``:
    the content is constrained to that JSON schema; ``json_mode``: to some JSON object.
    ``can_call``: the server parses calls out of free output (auto tool choice).
    """

    messages: list[dict[str, Any]]
    tools: list[Function] = field(default_factory=list)
    forced: Function | None = None
    must_call: bool = False
    schema: dict[str, Any] | None = None
    json_mode: bool = False
    can_call: bool = False

    def text(self) -> str:
        """Every text that reached the model, joined."""
        parts = [str(m.get("content") or "") for m in self.messages]
        parts += [f"{n}\n{a}" for m in self.messages for n, a in m.get("tool_calls", [])]
        return "\n".join(parts)

    def knows(self, name: str) -> bool:
        """Whether ``name`` reached the model: a rendered tool, the forced one, a schema
        constant, or a word of the messages."""
        if any(t.name == name for t in self.tools):
            return True
        if self.forced is not None and self.forced.name == name:
            return True
        if self.schema is not None and name in _schema_constants(self.schema):
            return True
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", self.text()) is not None

    def asks_for_envelope(self) -> bool:
        """Whether the messages ask for a JSON object ``{"tool": ..., "arguments": ...}``."""
        text = self.text()
        return '"tool"' in text and '"arguments"' in text


@dataclass(frozen=True)
class Call:
    """The model means to call ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Prose:
    """The model means to answer with text."""

    text: str


Decision = Call | Prose
Brain = Callable[[Seen], Decision]


def _schema_constants(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        if isinstance(schema.get("const"), str):
            found.add(schema["const"])
        for value in schema.get("enum") or []:
            if isinstance(value, str):
                found.add(value)
        for value in schema.values():
            found |= _schema_constants(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= _schema_constants(value)
    return found


# --- the oracle brain over the travel requests -------------------------------------------------


@dataclass(frozen=True)
class TravelCase:
    """One request of ``tests/fixtures/llm/travel_requests.yaml``."""

    id: str
    instructions: str
    tool: str
    arguments: dict[str, Any]


def travel_cases() -> list[TravelCase]:
    """The ten travel requests with the call a correct model makes."""
    rows = yaml.safe_load(TRAVEL_REQUESTS.read_text(encoding="utf-8"))
    return [
        TravelCase(r["id"], r["instructions"], r["tool"], {k: v for k, v in r["arguments"].items()})
        for r in rows
    ]


PROBE = "probe"
ANSWER = "answer"


class TravelOracle:
    """What an ideal model answers, keyed on the user's instructions.

    - a ``probe`` function that reached the model → ``probe({"ok": true})``;
    - the conversation holds one of the travel instructions (a user message containing it):
      if the call was already made (an assistant call to that tool is visible, a tool result
      is visible, or an API response was pasted back) → ``answer`` when that function reached
      the model, else a short text; otherwise the expected call when the tool's name reached
      the model, else text saying it has no tool for that;
    - anything else → a short text summary.
    """

    def __init__(self, cases: list[TravelCase] | None = None) -> None:
        self.cases = cases if cases is not None else travel_cases()

    def case_for(self, seen: Seen) -> TravelCase | None:
        users = [str(m.get("content") or "") for m in seen.messages if m["role"] == "user"]
        for content in reversed(users):
            for case in self.cases:
                if case.instructions in content:
                    return case
        return None

    def __call__(self, seen: Seen) -> Decision:
        if seen.knows(PROBE):
            return Call(PROBE, {"ok": True})
        case = self.case_for(seen)
        if case is None:
            return Prose("Here is a short summary of the answer.")
        if _already_called(seen, case.tool):
            if seen.knows(ANSWER):
                return Call(ANSWER, {"answer": f"{case.tool} answered the request.", "sql": None})
            return Prose(f"The request was handled by {case.tool}.")
        if seen.knows(case.tool):
            return Call(case.tool, copy.deepcopy(case.arguments))
        return Prose("I have no tool for that request; I can only describe what to do.")


def _already_called(seen: Seen, tool: str) -> bool:
    for message in seen.messages:
        if message["role"] == "tool":
            return True
        if message["role"] == "assistant":
            if any(name == tool for name, _ in message.get("tool_calls", [])):
                return True
            if f'"tool": "{tool}"' in str(message.get("content") or ""):
                return True
        if message["role"] == "user" and "API_RESPONSE" in str(message.get("content") or ""):
            return True
    return False


# --- turning a decision into output under the server's constraints -----------------------------


@dataclass
class Output:
    """What the model wrote: a call (``name`` + ``text`` = arguments) or text."""

    kind: Literal["call", "text"]
    text: str
    name: str | None = None
    finish: str = "stop"
    extra_calls: list[tuple[str, str]] = field(default_factory=list)


def instance(schema: Any) -> Any:
    """A minimal value valid against ``schema`` (what a grammar forces out of a clueless model)."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return instance(schema[key][0])
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: instance(props.get(name, {})) for name in schema.get("required") or []}
    return {"string": "", "integer": 0, "number": 0, "boolean": True, "array": []}.get(kind)


def with_nulls(schema: Any, value: Any) -> Any:
    """``value`` with each required property it leaves out set to null (strict schemas make an
    optional property required and nullable: a model leaving it out writes null)."""
    if not isinstance(schema, dict) or not isinstance(value, dict):
        return value
    props = schema.get("properties") or {}
    out = {k: with_nulls(props.get(k), v) for k, v in value.items()}
    for name in schema.get("required") or []:
        out.setdefault(name, None)
    return out


def fit(schema: dict[str, Any], *candidates: Any) -> Any:
    """The first candidate valid against ``schema`` (as written, or with the required properties
    it leaves out set to null), else a minimal valid value."""
    validator = jsonschema.Draft202012Validator(schema)
    for candidate in candidates:
        if candidate is None:
            continue
        if validator.is_valid(candidate):
            return candidate
        if validator.is_valid(completed := with_nulls(schema, candidate)):
            return completed
    return instance(schema)


def envelope(decision: Decision) -> dict[str, Any]:
    """``{"tool": ..., "arguments": ...}`` for a call; ``{"answer": ...}`` for text."""
    if isinstance(decision, Call):
        return {"tool": decision.name, "arguments": decision.arguments}
    return {"answer": decision.text}


def prose_of(decision: Decision) -> str:
    if isinstance(decision, Prose):
        return decision.text
    args = json.dumps(decision.arguments)
    return f"To do this I would use {decision.name} with {args}; I cannot call it myself."


def write(seen: Seen, decision: Decision) -> Output:
    """What the model writes for ``decision`` under ``seen``'s constraints (no length limit)."""
    if seen.forced is not None:
        wanted = decision.arguments if isinstance(decision, Call) else None
        if isinstance(decision, Call) and decision.name != seen.forced.name:
            wanted = None
        # a forced function whose parameters are {tool, arguments} takes the call whole
        args = fit(seen.forced.parameters, wanted, envelope(decision) if wanted is None else None)
        return Output("call", json.dumps(args), name=seen.forced.name)
    if seen.must_call and seen.tools:
        names = {t.name: t for t in seen.tools}
        if isinstance(decision, Call) and decision.name in names:
            chosen = names[decision.name]
            args = fit(chosen.parameters, decision.arguments)
        else:
            chosen = names.get("none_suitable", seen.tools[0])
            args = fit(chosen.parameters, {"reason": prose_of(decision)})
        return Output("call", json.dumps(args), name=chosen.name)
    if seen.schema is not None:
        arguments = decision.arguments if isinstance(decision, Call) else None
        value = fit(seen.schema, envelope(decision), arguments, {"answer": prose_of(decision)})
        return Output("text", json.dumps(value))
    if seen.json_mode:
        return Output("text", json.dumps(envelope(decision)))
    callable_names = {t.name for t in seen.tools} if seen.can_call else set()
    if isinstance(decision, Call) and decision.name in callable_names:
        return Output("call", json.dumps(decision.arguments), name=decision.name)
    if isinstance(decision, Call) and seen.asks_for_envelope():
        return Output("text", json.dumps(envelope(decision)))
    return Output("text", prose_of(decision))


def cut(output: Output, limit: int | None) -> Output:
    """Cut ``output`` at ``limit`` tokens (finish_reason "length")."""
    if limit is not None and tokens(output.text) > limit:
        output.text = output.text[: max(limit, 0) * CHARS_PER_TOKEN]
        output.finish = "length"
    return output


RAMBLE = (
    "Let me think about this request step by step. There are several things to consider here, "
    "and I will go through each of them carefully before giving a final answer. "
)


def ramble(start: str, limit: int) -> str:
    """``start`` followed by filler up to ``limit`` tokens (a model that does not stop)."""
    text = start + " "
    want = max(limit, 1) * CHARS_PER_TOKEN
    while len(text) < want:
        text += RAMBLE
    return text[:want]


# --- the servers -------------------------------------------------------------------------------


class ServerError(Exception):
    """An error answer: ``status`` and the JSON body the real server sends."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _openai_error(
    status: int, message: str, kind: str, *, param: str | None = None, code: Any = None
) -> ServerError:
    """The OpenAI-shaped error body all three servers send: ``{"error": {message, type, ...}}``."""
    return ServerError(
        status, {"error": {"message": message, "type": kind, "param": param, "code": code}}
    )


def _id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def _function(tool: Any) -> Function | None:
    if not isinstance(tool, dict):
        return None
    spec = tool.get("function") if tool.get("type", "function") == "function" else None
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        return None
    params = spec.get("parameters") if isinstance(spec.get("parameters"), dict) else {}
    return Function(spec["name"], params or {}, str(spec.get("description") or ""))


def _rendered(message: dict[str, Any], *, calls: bool = True) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    out: dict[str, Any] = {"role": message.get("role"), "content": content or ""}
    if calls and message.get("tool_calls"):
        out["tool_calls"] = [
            (str(c.get("function", {}).get("name")), str(c.get("function", {}).get("arguments")))
            for c in message["tool_calls"]
            if isinstance(c, dict)
        ]
    return out


def prompt_tokens(seen: Seen) -> int:
    """The prompt's tokens: the messages and rendered tools that reached the model."""
    rendered = json.dumps(seen.messages, default=str) + json.dumps(
        [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in seen.tools
        ]
    )
    return tokens(rendered)


class LLMServer:
    """One scripted server: a profile (how it answers) and a brain (what the model means)."""

    kind = "base"

    def __init__(self, brain: Brain | None = None, *, model: str = "served-model") -> None:
        self.brain: Brain = brain or TravelOracle()
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.seen: list[Seen] = []
        self.answers: list[tuple[int, dict[str, Any]]] = []
        self.base_url = ""
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.seen.clear()
            self.answers.clear()

    def think(self, seen: Seen) -> Decision:
        with self._lock:
            self.seen.append(seen)
        return self.brain(seen)

    # profiles implement this: the JSON answer for a (recorded) request body
    def answer(self, body: Any) -> dict[str, Any]:
        raise NotImplementedError

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.model, "object": "model"}]}

    def completion(
        self, model: str, output: Output, seen: Seen, *, content_on_call: Any
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        if output.kind == "call":
            calls = [(output.name or "", output.text), *output.extra_calls]
            message["content"] = content_on_call
            message["tool_calls"] = [
                {"id": _id("call_"), "type": "function", "function": {"name": n, "arguments": a}}
                for n, a in calls
            ]
        else:
            message["content"] = output.text
        used = tokens(output.text)
        prompt = prompt_tokens(seen)
        return {
            "id": _id("chatcmpl-"),
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": output.finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": used,
                "total_tokens": prompt + used,
            },
        }

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> JSONResponse:
            raw = await request.body()
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            with self._lock:
                self.requests.append(body if isinstance(body, dict) else {"_raw": body})
            try:
                status, payload = 200, self.answer(body)
            except ServerError as exc:
                status, payload = exc.status, exc.body
            with self._lock:
                self.answers.append((status, payload))
            return JSONResponse(payload, status_code=status)

        @app.get("/v1/models")
        async def models() -> JSONResponse:
            return JSONResponse(self.models())

        return app


# --- llama-cpp-python --------------------------------------------------------------------------

LlamaFormat = Literal["default", "chatml-function-calling", "gemma"]


class _ToolCallFunction(TypedDict):
    name: str
    arguments: str


class _ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: _ToolCallFunction


class _System(TypedDict):
    role: Literal["system"]
    content: str | None


class _User(TypedDict):
    role: Literal["user"]
    content: str | list[dict[str, Any]] | None


class _Assistant(TypedDict):
    role: Literal["assistant"]
    content: NotRequired[str]
    tool_calls: NotRequired[list[_ToolCall]]


class _Tool(TypedDict):
    role: Literal["tool"]
    content: str | None
    tool_call_id: str


class _FunctionMessage(TypedDict):
    role: Literal["function"]
    content: str | None
    name: str


class _FunctionSpec(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]


class _ToolSpec(TypedDict):
    type: Literal["function"]
    function: _FunctionSpec


class _NamedChoiceFunction(TypedDict):
    name: str


class _NamedChoice(TypedDict):
    type: Literal["function"]
    function: _NamedChoiceFunction


class _ResponseFormat(TypedDict):
    type: Literal["text", "json_object"]
    schema: NotRequired[Any]


class _LlamaRequest(BaseModel):
    """The chat request as llama-cpp-python's server types it (unknown fields ignored)."""

    model: str | None = None
    messages: list[_System | _User | _Assistant | _Tool | _FunctionMessage] = []
    tools: list[_ToolSpec] | None = None
    tool_choice: Literal["none", "auto", "required"] | _NamedChoice | None = None
    max_tokens: int | None = None
    response_format: _ResponseFormat | None = None
    stream: bool = False


def _llama_500(message: str) -> ServerError:
    return _openai_error(500, message, "internal_server_error")


class LlamaCppServer(LLMServer):
    """llama-cpp-python's ``llama_cpp.server`` with one chat format."""

    kind = "llama.cpp"

    def __init__(
        self,
        brain: Brain | None = None,
        *,
        chat_format: LlamaFormat = "default",
        n_ctx: int = 4096,
        model: str = "served-model",
    ) -> None:
        super().__init__(brain, model=model)
        self.chat_format = chat_format
        self.n_ctx = n_ctx

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "owned_by": "me", "permissions": []}],
        }

    def answer(self, body: Any) -> dict[str, Any]:
        try:
            request = _LlamaRequest.model_validate(body)
        except ValidationError as exc:
            errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
            raise _llama_500(str(RequestValidationError(errors))) from None
        messages: list[dict[str, Any]] = [dict(m) for m in request.messages]
        tools = [f for f in (_function(t) for t in body.get("tools") or []) if f is not None]
        choice = body.get("tool_choice")
        named = choice["function"]["name"] if isinstance(choice, dict) else None
        model = request.model or self.model
        fmt = request.response_format
        schema = fmt.get("schema") if fmt and fmt["type"] == "json_object" else None
        json_mode = bool(fmt and fmt["type"] == "json_object")
        if self.chat_format == "chatml-function-calling":
            return self._chatml_function_calling(
                request, messages, tools, choice, named, model, schema, json_mode
            )
        rendered = self._render_simple(messages)
        forced = None
        if named is not None and tools:
            forced = next((t for t in tools if t.name == named), None)
            if forced is None:
                raise _llama_500(f"Tool choice '{named}' not found in tools.")
        rendered_tools: list[Function] = []
        seen = Seen(
            rendered,
            tools=rendered_tools,
            forced=forced,
            schema=schema if forced is None else None,
            json_mode=json_mode and forced is None,
        )
        limit = self._limit(seen, request.max_tokens)
        output = write(seen, self.think(seen))
        if (
            output.kind == "text"
            and not (seen.schema or seen.json_mode)
            and self.chat_format == "default"
            and not _is_json(output.text)
        ):
            # this model does not stop on prose: it writes until max_tokens or the window
            output.text = ramble(output.text, limit)
            output.finish = "length"
        output = cut(output, limit)
        if output.kind == "call":
            output.finish = "tool_calls"  # hard-coded by the handler, even when cut
        return self.completion(model, output, seen, content_on_call=None)

    def _render_simple(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.chat_format == "default":
            # a GGUF Jinja template: system/user/assistant/tool messages, no tool definitions
            return [_rendered(m) for m in messages]
        # gemma: system dropped; only user/assistant content (message["content"] read directly)
        out: list[dict[str, Any]] = []
        for message in messages:
            if message["role"] not in ("user", "assistant"):
                continue
            if "content" not in message:
                raise _llama_500("'content'")
            out.append(_rendered(message, calls=False))
        return out

    def _limit(self, seen: Seen, max_tokens: int | None) -> int:
        prompt = prompt_tokens(seen)
        if prompt >= self.n_ctx:
            raise _openai_error(
                400,
                f"This model's maximum context length is {self.n_ctx} tokens. However, you "
                f"requested {(max_tokens or 0) + prompt} tokens ({prompt} in the messages, "
                f"{max_tokens} in the completion). Please reduce the length of the messages or "
                "completion.",
                "invalid_request_error",
                param="messages",
                code="context_length_exceeded",
            )
        room = self.n_ctx - prompt
        if max_tokens is None or max_tokens <= 0:
            return room
        return min(max_tokens, room)

    def _chatml_function_calling(
        self,
        request: _LlamaRequest,
        messages: list[dict[str, Any]],
        tools: list[Function],
        choice: Any,
        named: str | None,
        model: str,
        schema: dict[str, Any] | None,
        json_mode: bool,
    ) -> dict[str, Any]:
        for message in messages:
            if message["role"] == "assistant" and "content" not in message:
                raise _llama_500("'dict object' has no attribute 'content'")
        plain = choice is None or choice == "none" or not tools
        has_system = any(m["role"] == "system" for m in messages)
        rendered = [_rendered(m) for m in messages if m["role"] in ("system", "user", "assistant")]
        shown = tools if (not plain and has_system) else []
        if plain:
            seen = Seen(rendered, schema=schema, json_mode=json_mode)
            limit = self._limit(seen, request.max_tokens)
            output = cut(write(seen, self.think(seen)), limit)
            return self.completion(model, output, seen, content_on_call=None)
        if isinstance(choice, dict):
            forced = next((t for t in tools if t.name == named), None)
            if forced is None:
                raise _llama_500(f"Tool with name '{named}' not found in tools")
            seen = Seen(rendered, tools=shown, forced=forced)
            limit = self._limit(seen, request.max_tokens)
            output = cut(write(seen, self.think(seen)), limit)
            output.finish = "tool_calls"
            return self.completion(model, output, seen, content_on_call=None)
        if choice != "auto":
            raise _llama_500("")  # assert isinstance(tool_choice, str) and tool_choice == "auto"
        seen = Seen(rendered, tools=shown, can_call=True)
        self._limit(seen, None)  # max_tokens is ignored on this path
        output = write(seen, self.think(seen))
        if output.kind == "call" and output.name in {t.name for t in tools}:
            output.finish = "tool_calls"
            return self.completion(model, output, seen, content_on_call=None)
        # "message:" branch: its grammar only allows "<|im_end|>", so the text comes back empty
        return self.completion(model, Output("text", ""), seen, content_on_call=None)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# --- vLLM --------------------------------------------------------------------------------------


def _vllm_error(status: int, message: str, kind: str = "BadRequestError") -> ServerError:
    return _openai_error(status, message, kind, code=status)


class VLLMServer(LLMServer):
    """vLLM's OpenAI-compatible server (``vllm serve``)."""

    kind = "vllm"

    def __init__(
        self,
        brain: Brain | None = None,
        *,
        auto_tool_choice: bool = False,
        max_model_len: int = 8192,
        model: str = "served-model",
    ) -> None:
        super().__init__(brain, model=model)
        self.auto_tool_choice = auto_tool_choice
        self.max_model_len = max_model_len

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {
                    "id": self.model,
                    "object": "model",
                    "created": 0,
                    "owned_by": "vllm",
                    "root": self.model,
                    "parent": None,
                    "max_model_len": self.max_model_len,
                }
            ],
        }

    def answer(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise _vllm_error(400, "1 validation error: messages: Field required")
        choice = self._check_tool_usage(body)
        model = body.get("model") or self.model
        if model != self.model:
            raise _vllm_error(404, f"The model `{model}` does not exist.", "NotFoundError")
        if choice == "auto" and not self.auto_tool_choice:
            raise _vllm_error(
                400,
                '"auto" tool choice requires --enable-auto-tool-choice and '
                "--tool-call-parser to be set",
            )
        tools = [f for f in (_function(t) for t in body.get("tools") or []) if f is not None]
        schema, json_mode = self._structured(body)
        rendered = [_rendered(m) for m in body["messages"] if isinstance(m, dict)]
        forced = None
        if isinstance(choice, dict):
            forced = next(t for t in tools if t.name == choice["function"]["name"])
        seen = Seen(
            rendered,
            tools=tools,
            forced=forced,
            must_call=choice == "required",
            schema=schema if choice in (None, "none", "auto") else None,
            json_mode=json_mode and choice in (None, "none", "auto"),
            can_call=choice == "auto",
        )
        limit = self._limit(seen, body.get("max_tokens") or body.get("max_completion_tokens"))
        output = cut(write(seen, self.think(seen)), limit)
        if (
            output.kind == "call"
            and output.finish == "length"
            and choice != "auto"
            and forced is None
        ):
            return self.completion(
                model, Output("text", output.text, finish="length"), seen, content_on_call=""
            )
        if output.kind == "call" and output.finish != "length":
            output.finish = "stop" if forced is not None else "tool_calls"
        return self.completion(
            model, output, seen, content_on_call=None if choice == "auto" else ""
        )

    def _check_tool_usage(self, body: dict[str, Any]) -> Any:
        tools = body.get("tools")
        if tools == []:
            raise _vllm_error(
                400,
                "`tools` must not be an empty array. "
                "Either provide at least one tool or omit the field entirely.",
            )
        choice = body.get("tool_choice")
        if "tool_choice" not in body and tools:
            choice = "auto"
        if choice is None or choice == "none":
            return choice
        if tools is None:
            raise _vllm_error(400, "When using `tool_choice`, `tools` must be set.")
        if choice not in ("auto", "required") and not isinstance(choice, dict):
            raise _vllm_error(
                400,
                f"Invalid value for `tool_choice`: {choice}! "
                'Only named tools, "none", "auto" or "required" are supported.',
            )
        if isinstance(choice, dict):
            function = choice.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(name, str) or not any(
                isinstance(t, dict) and t.get("function", {}).get("name") == name for t in tools
            ):
                raise _vllm_error(
                    400,
                    "The tool specified in `tool_choice` does not match any"
                    " of the specified `tools`",
                )
        return choice

    def _structured(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        guided = body.get("guided_json")
        if guided is None and isinstance(body.get("structured_outputs"), dict):
            guided = body["structured_outputs"].get("json")
        if isinstance(guided, str):
            guided = json.loads(guided)
        if isinstance(guided, dict):
            return guided, False
        fmt = body.get("response_format")
        if not isinstance(fmt, dict):
            return None, False
        if fmt.get("type") == "json_schema":
            wrapper = fmt.get("json_schema")
            if not isinstance(wrapper, dict):
                raise _vllm_error(500, "", "InternalServerError")
            return dict(wrapper.get("schema") or {}), False
        return None, fmt.get("type") == "json_object"

    def _limit(self, seen: Seen, max_tokens: int | None) -> int:
        prompt = prompt_tokens(seen)
        if prompt >= self.max_model_len:
            raise _vllm_error(
                400,
                f"This model's maximum context length is {self.max_model_len} tokens. However, "
                f"your request has {prompt} input tokens. Please reduce the length of the input "
                "messages.",
            )
        if max_tokens is not None and prompt + max_tokens > self.max_model_len:
            raise _vllm_error(
                400,
                f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's "
                f"maximum context length is {self.max_model_len} tokens and your request has "
                f"{prompt} input tokens ({max_tokens} > {self.max_model_len} - {prompt}).",
            )
        return max_tokens if max_tokens is not None else self.max_model_len - prompt


# --- Ollama ------------------------------------------------------------------------------------


def _ollama_error(status: int, message: str) -> ServerError:
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    return _openai_error(status, message, kind)


class OllamaServer(LLMServer):
    """Ollama's OpenAI-compatible endpoint (``/v1/chat/completions``)."""

    kind = "ollama"

    def __init__(
        self, brain: Brain | None = None, *, num_ctx: int = 4096, model: str = "served-model"
    ) -> None:
        super().__init__(brain, model=model)
        self.num_ctx = num_ctx

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "library"}],
        }

    def answer(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _ollama_error(400, "invalid request")
        messages = body.get("messages") or []
        for message in messages:
            content = message.get("content")
            if content is not None and not isinstance(content, (str, list)):
                raise _ollama_error(400, f"invalid message content type: {type(content).__name__}")
            if content is None and not message.get("tool_calls"):
                raise _ollama_error(400, "invalid message content type: <nil>")
            for call in message.get("tool_calls") or []:
                if not _is_json(str(call.get("function", {}).get("arguments"))):
                    raise _ollama_error(400, "invalid tool call arguments")
        model = body.get("model")
        if model != self.model:
            raise _ollama_error(404, f'model "{model}" not found, try pulling it first')
        tools = [f for f in (_function(t) for t in body.get("tools") or []) if f is not None]
        schema: dict[str, Any] | None = None
        json_mode = False
        fmt = body.get("response_format")
        if isinstance(fmt, dict):
            kind = str(fmt.get("type", "")).strip().lower()
            if kind == "json_object":
                json_mode = True
            elif kind == "json_schema" and isinstance(fmt.get("json_schema"), dict):
                schema = dict(fmt["json_schema"].get("schema") or {})
        rendered = self._truncate([_rendered(m) for m in messages], tools)
        seen = Seen(rendered, tools=tools, schema=schema, json_mode=json_mode, can_call=bool(tools))
        max_tokens = body.get("max_tokens")
        output = cut(write(seen, self.think(seen)), max_tokens)
        if output.kind == "call" and output.finish == "length":
            output = Output("text", output.text, finish="length")  # a cut call is not parsed
        if output.kind == "call":
            output.finish = "tool_calls"
        return self.completion(model, output, seen, content_on_call="")

    def _truncate(
        self, messages: list[dict[str, Any]], tools: list[Function]
    ) -> list[dict[str, Any]]:
        """Drop the oldest messages until the prompt fits, keeping system messages and the last."""
        start = 0
        while start < len(messages) - 1:
            kept = [m for m in messages[:start] if m["role"] == "system"] + messages[start:]
            if prompt_tokens(Seen(kept, tools=tools)) <= self.num_ctx:
                return kept
            start += 1
        return [m for m in messages[:start] if m["role"] == "system"] + messages[start:]


# --- running them ------------------------------------------------------------------------------

ProfileName = Literal[
    "llama_cpp:default",
    "llama_cpp:chatml-function-calling",
    "llama_cpp:gemma",
    "vllm",
    "vllm:auto",
    "ollama",
]
PROFILES: tuple[ProfileName, ...] = (
    "llama_cpp:default",
    "llama_cpp:chatml-function-calling",
    "llama_cpp:gemma",
    "vllm",
    "vllm:auto",
    "ollama",
)


def llama_cpp(
    chat_format: LlamaFormat = "default", brain: Brain | None = None, **options: Any
) -> LlamaCppServer:
    """A llama-cpp-python server profile (not yet serving: see :func:`running`)."""
    return LlamaCppServer(brain, chat_format=chat_format, **options)


def vllm(auto_tool_choice: bool = False, brain: Brain | None = None, **options: Any) -> VLLMServer:
    """A vLLM server profile, started with or without ``--enable-auto-tool-choice``."""
    return VLLMServer(brain, auto_tool_choice=auto_tool_choice, **options)


def ollama(brain: Brain | None = None, **options: Any) -> OllamaServer:
    """An Ollama server profile."""
    return OllamaServer(brain, **options)


def profile(name: ProfileName, brain: Brain | None = None, **options: Any) -> LLMServer:
    """The server for a profile name of :data:`PROFILES`."""
    if name.startswith("llama_cpp:"):
        fmt = name.split(":", 1)[1]
        return llama_cpp(fmt, brain, **options)  # type: ignore[arg-type]
    if name.startswith("vllm"):
        return vllm(name == "vllm:auto", brain, **options)
    return ollama(brain, **options)


@contextmanager
def running(server: LLMServer) -> Iterator[LLMServer]:
    """Serve ``server`` on loopback; its ``base_url`` ends in ``/v1``."""
    with serve(server.app()) as url:
        server.base_url = f"{url}/v1"
        yield server
