"""The LLM port and its adapter for any OpenAI-compatible chat completions endpoint.

The port has two calls: ``choose`` (exactly one function call among the offered functions) and
``complete`` (plain text, no tools; used to format an API response and to draft). The adapter
asks for a call the best way the endpoint supports (``capabilities.py``: forced choice, a named
function, ``response_format`` with a ``{tool, arguments}`` schema, ``auto`` with a prompt, or a
plain answer parsed as JSON) and returns it as a tool call either way; the caller validates it
and re-asks with ``assistant_turn`` / ``call_result``, which write the conversation in shapes
every server accepts (never ``content: null``; tool messages only after calls the server made).

Every request carries ``max_tokens`` (``LLM_MAX_TOKENS`` for a call, ``LLM_TEXT_MAX_TOKENS`` for
text). Failures map onto the error tree with the server's own words and the setting to change:
transport failures, 429, 502-504 (retried ``LLM_MAX_RETRIES`` times, each attempt counted)
become :class:`LLMUnavailableError`; a timeout says how long and which setting; other
rejections become :class:`LLMError`. No message ever contains the API key.

With tracing on, each call is a client span ``chat <model>`` (``gen_ai.operation.name``,
``gen_ai.request.model``, ``gen_ai.usage.*``, ``gen_ai.response.finish_reasons``,
``server.address``, ``error.type``; never a prompt or an answer) and carries ``traceparent``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from loguru import logger
from opentelemetry.trace import SpanKind

from dynamic_tools.errors import LLMError, LLMUnavailableError
from dynamic_tools.observability.tracing import Tracing, mark_error
from dynamic_tools.selection.capabilities import (
    TRANSIENT_STATUS,
    Capabilities,
    Method,
    first_json_object,
    is_openai,
    missing_call_hint,
    probe,
    probed,
    server_text,
)
from dynamic_tools.selection.function_schema import FunctionSpec

if TYPE_CHECKING:
    from collections.abc import Awaitable

    import openai

    from dynamic_tools.selection.models import TokenUsage

#: the one function of the ``named`` way when there are several candidates
CALL_FUNCTION = "call"


@dataclass(frozen=True)
class ToolCall:
    """A function the model called, with its arguments as the raw JSON text it wrote.

    ``native`` is False when the call was read from JSON the model wrote (not a tool call of
    the server's): the conversation then goes on in plain messages.
    """

    id: str
    name: str
    arguments: str
    native: bool = True


@dataclass(frozen=True)
class LLMAnswer:
    """One answer of the model (``calls`` requests were made for it, retries included)."""

    tool_calls: list[ToolCall]
    content: str | None
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 1
    method: str = "required"

    @property
    def missing_call(self) -> str:
        """Why no call came, in terms of the way it was asked for, and what to try."""
        return missing_call_hint(self.method)


class LLMClient(Protocol):
    """What the pipeline needs from an LLM."""

    async def choose(
        self, messages: list[dict[str, Any]], functions: list[FunctionSpec]
    ) -> LLMAnswer:
        """Ask the model to call exactly one of ``functions``."""
        ...

    async def complete(self, messages: list[dict[str, Any]]) -> LLMAnswer:
        """Ask the model for text; no tools are offered."""
        ...

    async def shows_functions(self) -> bool:
        """Whether the model reads the functions' definitions (their parameters)."""
        ...

    async def uses_strict(self) -> bool:
        """Whether strict schemas are sent (and enforced by the endpoint)."""
        ...


async def counted(usage: TokenUsage, request: Awaitable[LLMAnswer]) -> LLMAnswer:
    """The answer to ``request``, its tokens and requests counted in ``usage`` (a failure too)."""
    try:
        answer = await request
    except LLMError as exc:
        usage.add(0, 0, calls=exc.llm_calls)
        raise
    usage.add(answer.prompt_tokens, answer.completion_tokens, calls=answer.calls)
    return answer


def assistant_turn(call: ToolCall, content: str | None = None) -> dict[str, Any]:
    """The model's turn that made ``call``, as every server accepts it (no ``content: null``)."""
    if not call.native:
        envelope = {"tool": call.name, "arguments": _loads_or_text(call.arguments)}
        return {"role": "assistant", "content": json.dumps(envelope, ensure_ascii=False)}
    return {
        "role": "assistant",
        "content": content or "",
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
        ],
    }


def call_result(call: ToolCall, text: str) -> dict[str, Any]:
    """What ``call`` got back (or why it was not made), for the model to read next."""
    if not call.native:
        return {"role": "user", "content": f"Result of {call.name}: {text}"}
    return {"role": "tool", "tool_call_id": call.id, "content": text}


def _loads_or_text(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text


class OpenAIChatClient:
    """:class:`LLMClient` over ``openai.AsyncOpenAI`` (OpenAI, Azure, llama.cpp, vLLM, Ollama)."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        model: str,
        tracing: Tracing | None = None,
        capabilities: Capabilities | None = None,
        tool_choice: str | None = None,
        strict: bool | None = None,
        max_tokens: int = 512,
        text_max_tokens: int = 2048,
        max_retries: int = 2,
        timeout_s: float = 60.0,
    ) -> None:
        self.client = client
        self.model = model
        self.tracing = tracing or Tracing.off()
        self.max_tokens = max_tokens
        self.text_max_tokens = text_max_tokens
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self._forced = tool_choice
        self._strict = strict
        self._capabilities = capabilities
        # OpenAI's own host, however the capabilities came (declared in LLM_CAPABILITIES too)
        self._openai_endpoint = is_openai(str(client.base_url))
        self._probing: asyncio.Task[Capabilities] | None = None
        self._probe_error: str | None = None

    # --- capabilities ----------------------------------------------------------------------
    @property
    def probe_error(self) -> str | None:
        """Why the last probe could not run (the endpoint did not answer), if it failed."""
        return self._probe_error

    def readiness(self) -> dict[str, Any]:
        """What ``/readyz`` shows: the capabilities once known, else how the probe stands."""
        if self._capabilities is not None:
            return self._capabilities.view()
        return {"probe": "failed" if self._probe_error else "running"}

    def start_probe(self) -> None:
        """Probe in the background (at start), unless the capabilities are known."""
        if self._capabilities is None and self._probing is None:
            self._probing = asyncio.get_running_loop().create_task(self._probe())
            self._probing.add_done_callback(_log_probe_failure)

    async def aclose(self) -> None:
        """Stop a probe still running and close the HTTP client."""
        if self._probing is not None and not self._probing.done():
            self._probing.cancel()
            await asyncio.gather(self._probing, return_exceptions=True)
        await self.client.close()

    async def capabilities(self) -> Capabilities:
        """The capabilities: declared, cached, or probed now (a failed probe is retried)."""
        if self._capabilities is not None:
            return self._capabilities
        task = self._probing
        if task is None or (task.done() and task.exception() is not None):
            task = self._probing = asyncio.get_running_loop().create_task(self._probe())
        try:
            return await asyncio.shield(task)
        except LLMError:
            raise
        except Exception as exc:  # pragma: no cover - _probe maps its failures
            raise LLMError(f"the LLM endpoint could not be probed ({type(exc).__name__})") from None

    async def _probe(self) -> Capabilities:
        import openai

        try:
            result = await probe(self.client, self.model, timeout_s=min(self.timeout_s, 60.0))
        except openai.APITimeoutError:
            self._probe_error = "timed out"
            raise self._timeout_error() from None
        except openai.APIConnectionError:
            self._probe_error = "no connection"
            raise _unreachable() from None
        except openai.APIStatusError as exc:  # a transient status: probed again on next use
            self._probe_error = f"answered {exc.status_code}"
            raise LLMUnavailableError(
                f"the LLM endpoint answered {exc.status_code} while its capabilities were "
                f"probed: {server_text(exc) or 'no message'} (probed again on the next request)"
            ) from None
        self._probe_error = None
        found = probed(result, forced=self._forced, strict=self._strict)
        logger.info(
            "LLM endpoint probed: {} (asks by {})", ",".join(sorted(found.supported)), found.method
        )
        self._capabilities = found
        return found

    async def shows_functions(self) -> bool:
        """Whether the model reads the function definitions (so not also in the context)."""
        caps = await self.capabilities()
        return caps.method in ("required", "named", "auto") and "tool_definitions" in caps.supported

    async def uses_strict(self) -> bool:
        """Whether strict schemas are sent (and enforced by the endpoint)."""
        return (await self.capabilities()).strict

    # --- the port --------------------------------------------------------------------------
    async def choose(
        self, messages: list[dict[str, Any]], functions: list[FunctionSpec]
    ) -> LLMAnswer:
        """Exactly one call among ``functions``, asked for the best way the endpoint allows."""
        caps = await self.capabilities()
        method: Method = caps.method
        kwargs: dict[str, Any]
        if method == "named" and len(functions) == 1:
            only = functions[0]
            kwargs = {
                "tools": [only.to_openai(strict=caps.strict)],
                "tool_choice": {"type": "function", "function": {"name": only.name}},
            }
        elif method in ("required", "auto"):
            kwargs = {
                "tools": [f.to_openai(strict=caps.strict) for f in functions],
                "tool_choice": method,
            }
            if self._openai_endpoint:
                kwargs["parallel_tool_calls"] = False
            if method == "auto":
                messages = _with_instruction(messages, _AUTO_INSTRUCTION)
        elif method == "named":
            schema = _envelope_schema(functions, strict=False)
            kwargs = {
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": CALL_FUNCTION,
                            "description": "Call one of the functions: name it in 'tool' and "
                            "give its arguments in 'arguments'.",
                            "parameters": schema,
                        },
                    }
                ],
                "tool_choice": {"type": "function", "function": {"name": CALL_FUNCTION}},
            }
        else:  # json_schema, text
            messages = _with_instruction(
                messages, _JSON_INSTRUCTION + "\n\n" + _functions_text(functions, messages)
            )
            kwargs = {}
            if method == "json_schema" and "json_schema" in caps.supported:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": "tool_call",
                        "schema": _envelope_schema(functions, strict=caps.strict),
                        **({"strict": True} if caps.strict else {}),
                    },
                }
            elif method == "json_schema":  # llama.cpp's form of the same
                kwargs["response_format"] = {
                    "type": "json_object",
                    "schema": _envelope_schema(functions, strict=False),
                }
            elif "json_object" in caps.supported:
                kwargs["response_format"] = {"type": "json_object"}
        answer = await self._create(
            caps, method, messages=messages, max_tokens=self.max_tokens, **kwargs
        )
        return _as_calls(answer, method, {f.name for f in functions})

    async def complete(self, messages: list[dict[str, Any]]) -> LLMAnswer:
        """A plain completion, at most ``LLM_TEXT_MAX_TOKENS`` long."""
        caps = await self.capabilities()
        return await self._create(caps, "text", messages=messages, max_tokens=self.text_max_tokens)

    # --- the request -----------------------------------------------------------------------
    async def _create(self, caps: Capabilities, method: str, **kwargs: Any) -> LLMAnswer:
        if not caps.system:
            kwargs["messages"] = _fold_system(kwargs["messages"])
        if self._openai_endpoint:  # newer OpenAI models refuse max_tokens
            kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
        if not self.tracing.enabled:
            return await self._attempts(method, **kwargs)
        url = self.client.base_url
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": self.model,
            "server.address": url.host,
            "server.port": url.port or (443 if url.scheme == "https" else 80),
        }
        with self.tracing.span(
            f"chat {self.model}", kind=SpanKind.CLIENT, attributes=attributes
        ) as span:
            headers: dict[str, str] = {}
            self.tracing.inject(headers)
            try:
                answer = await self._attempts(method, extra_headers=headers, **kwargs)
            except LLMError as exc:
                mark_error(span, exc.code)
                raise
            span.set_attributes(
                {
                    "gen_ai.usage.input_tokens": answer.prompt_tokens,
                    "gen_ai.usage.output_tokens": answer.completion_tokens,
                    "gen_ai.response.finish_reasons": [answer.finish_reason or ""],
                }
            )
            return answer

    async def _attempts(self, method: str, **kwargs: Any) -> LLMAnswer:
        """One request, retried on transport failures, 429 and 502-504; every attempt counted."""
        attempt = 0
        while True:
            attempt += 1
            try:
                answer = await self._call(method, **kwargs)
            except LLMUnavailableError as exc:
                if attempt > self.max_retries or exc.context.get("final"):
                    exc.llm_calls = attempt
                    raise
                await asyncio.sleep(min(0.5 * 2 ** (attempt - 1), 8.0))
                continue
            except LLMError as exc:
                exc.llm_calls = attempt
                raise
            return replace(answer, calls=attempt, method=method)

    def _timeout_error(self) -> LLMUnavailableError:
        return LLMUnavailableError(
            f"the LLM endpoint did not answer within {self.timeout_s:g} s (LLM_TIMEOUT_S): a "
            "slow (local) model needs a higher LLM_TIMEOUT_S, or a lower LLM_MAX_TOKENS",
            context={"final": True},
        )

    async def _call(self, method: str, **kwargs: Any) -> LLMAnswer:
        import openai  # loaded with the client (bootstrap.make_llm), so this is a lookup

        try:
            response = await self.client.chat.completions.create(model=self.model, **kwargs)
        except openai.APITimeoutError:
            raise self._timeout_error() from None
        except openai.APIConnectionError:
            raise _unreachable() from None
        except openai.AuthenticationError as exc:
            raise LLMError(
                "the LLM endpoint refused the credentials (check OPENAI_API_KEY): "
                + server_text(exc)
            ) from None
        except openai.APIStatusError as exc:
            said = server_text(exc)
            status = exc.status_code
            if status in TRANSIENT_STATUS:
                raise LLMUnavailableError(
                    f"the LLM endpoint answered {status}"
                    + (" (rate limited)" if status == 429 else " (unavailable)")
                    + (f": {said}" if said else "")
                ) from None
            raise LLMError(_rejection(status, said, self.model)) from None
        except openai.APIError as exc:
            raise LLMError(
                f"the LLM endpoint gave an unusable answer ({type(exc).__name__})"
            ) from None
        if not response.choices:
            raise LLMError("the LLM endpoint answered with no choices")
        choice = response.choices[0]
        message = choice.message
        calls = [
            ToolCall(
                id=c.id or f"call_{i}", name=c.function.name, arguments=c.function.arguments or ""
            )
            for i, c in enumerate(message.tool_calls or [])
            if getattr(c, "function", None) is not None
        ]
        usage = response.usage
        finish = choice.finish_reason
        cap = kwargs.get("max_tokens") or kwargs.get("max_completion_tokens")
        written = (usage.completion_tokens or 0) if usage else 0
        if cap and written >= cap and finish != "length":  # llama.cpp: "tool_calls" even when cut
            finish = "length"
        return LLMAnswer(
            tool_calls=calls,
            content=message.content,
            refusal=getattr(message, "refusal", None),
            finish_reason=finish,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=written,
            method=method,
        )


def _unreachable() -> LLMUnavailableError:
    return LLMUnavailableError("could not connect to the LLM endpoint (check OPENAI_BASE_URL)")


def _log_probe_failure(task: asyncio.Task[Capabilities]) -> None:
    """The start probe's failure, logged (and so retrieved, even when no request awaits it)."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        said = exc.message if isinstance(exc, LLMError) else type(exc).__name__
        logger.warning("LLM endpoint probe failed (probed again on the next request): {}", said)


def _rejection(status: int, said: str, model: str) -> str:
    """A refusal in the server's words, with the setting most likely at fault."""
    if status == 404:
        hint = f" (check LLM_MODEL={model!r} and OPENAI_BASE_URL)"
    elif "context" in said.lower() or "too long" in said.lower() or "exceed" in said.lower():
        hint = (
            " (the prompt is too long for the model's context: raise the server's context "
            "size, or lower SELECTION_TOP_K / LLM_MAX_TOKENS)"
        )
    elif status >= 500:
        hint = " (a server error: try another LLM_TOOL_CHOICE if it follows a request shape)"
    else:
        hint = ""
    kind = "failed" if status >= 500 else "rejected the request"
    return f"the LLM endpoint {kind} ({status}): {said or 'no message'}{hint}"


# --- the ways without native calls ----------------------------------------------------------
_AUTO_INSTRUCTION = "Answer only by calling exactly one of the functions; do not write text."
_JSON_INSTRUCTION = (
    'Answer with one JSON object and nothing else: {"tool": "<function name>", "arguments": '
    "{...}}, where the arguments follow that function's parameters below."
)


def _with_instruction(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """``messages`` with ``text`` appended to the system message (or a new one first)."""
    out = list(messages)
    for index, message in enumerate(out):
        if message.get("role") == "system":
            out[index] = {**message, "content": f"{message.get('content') or ''}\n\n{text}"}
            return out
    return [{"role": "system", "content": text}, *out]


def _fold_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """System messages folded into the first user message (a chat format that drops them)."""
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for index, message in enumerate(rest):
        if message.get("role") == "user":
            joined = "\n\n".join([*system, str(message.get("content") or "")])
            rest[index] = {**message, "content": joined}
            return rest
    return [{"role": "user", "content": "\n\n".join(system)}, *rest]


def _functions_text(functions: list[FunctionSpec], messages: list[dict[str, Any]]) -> str:
    """The functions as the model reads them when they are not sent as tools.

    A function the messages already document (its name appears in them: the tool context) is
    named only; the others come with their description and parameters.
    """
    said = "\n".join(str(m.get("content") or "") for m in messages)
    lines = ["Functions:"]
    for function in functions:
        if f"Tool: {function.name}" in said:
            lines.append(f"- {function.name}")
            continue
        parameters = json.dumps(
            function.loose_parameters, ensure_ascii=False, separators=(",", ":")
        )
        lines.append(f"- {function.name}: {function.description}\n  parameters: {parameters}")
    return "\n".join(lines)


def _envelope_schema(functions: list[FunctionSpec], *, strict: bool) -> dict[str, Any]:
    """``{tool, arguments}``, any one of the functions with its own parameters."""
    branches = []
    for function in functions:
        parameters = (
            function.parameters if strict and function.strict else function.loose_parameters
        )
        branch: dict[str, Any] = {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": [function.name]},
                "arguments": parameters,
            },
            "required": ["tool", "arguments"],
        }
        if strict:
            branch["additionalProperties"] = False
        branches.append(branch)
    if len(branches) == 1:
        return branches[0]
    return {"type": "object", "anyOf": branches}


def _as_calls(answer: LLMAnswer, method: str, offered: set[str]) -> LLMAnswer:
    """The answer with its call: the server's, or read from the ``{tool, arguments}`` it wrote."""
    calls = answer.tool_calls
    if calls and method == "named" and len(calls) == 1 and calls[0].name == CALL_FUNCTION:
        calls = _from_envelope(_loads_or_text(calls[0].arguments), offered) or calls
    elif not calls and answer.content:
        calls = _from_envelope(first_json_object(answer.content), offered) or []
    if calls is answer.tool_calls:
        return answer
    return replace(
        answer, tool_calls=calls, content=None if calls else answer.content, method=method
    )


def _from_envelope(value: Any, offered: set[str]) -> list[ToolCall] | None:
    """``{"tool": name, "arguments": {...}}`` (or ``name``/``function`` and ``parameters``)."""
    if not isinstance(value, dict):
        return None
    name = next(
        (value[k] for k in ("tool", "name", "function") if isinstance(value.get(k), str)), None
    )
    if name is None:
        if len(offered) == 1 and "arguments" not in value:  # the arguments alone
            return [ToolCall("call_1", next(iter(offered)), json.dumps(value), native=False)]
        return None
    arguments: Any = next((value[k] for k in ("arguments", "parameters", "args") if k in value), {})
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return [ToolCall("call_1", name, text, native=False)]
