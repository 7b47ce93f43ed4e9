"""The LLM port and its adapter for any OpenAI-compatible chat completions endpoint.

The port has two calls: ``choose`` (function calling, exactly one function required) and
``complete`` (plain text, no tools; used to format an API response). The adapter maps the
``openai`` client's failures onto the error tree: transport failures, 429 and 5xx (after the
client's own retries) become :class:`LLMUnavailableError`; other rejections become
:class:`LLMError`. No message ever contains the API key.

With tracing on, each call is a client span ``chat <model>`` (``gen_ai.operation.name``,
``gen_ai.request.model``, ``gen_ai.usage.*``, ``gen_ai.response.finish_reasons``,
``server.address``, ``error.type``; never a prompt or an answer) and carries ``traceparent``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry.trace import SpanKind

from dynamic_tools.errors import LLMError, LLMUnavailableError
from dynamic_tools.observability.tracing import Tracing, mark_error
from dynamic_tools.selection.function_schema import FunctionSpec

if TYPE_CHECKING:
    import openai


@dataclass(frozen=True)
class ToolCall:
    """A function the model called, with its arguments as the raw JSON text it wrote."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class LLMAnswer:
    """One answer of the model."""

    tool_calls: list[ToolCall]
    content: str | None
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


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


class OpenAIChatClient:
    """:class:`LLMClient` over ``openai.AsyncOpenAI`` (OpenAI, Azure, Ollama, vLLM, ...)."""

    def __init__(
        self, client: openai.AsyncOpenAI, *, model: str, tracing: Tracing | None = None
    ) -> None:
        self.client = client
        self.model = model
        self.tracing = tracing or Tracing.off()

    async def choose(
        self, messages: list[dict[str, Any]], functions: list[FunctionSpec]
    ) -> LLMAnswer:
        """Function calling with ``tool_choice="required"`` and one call at most."""
        return await self._create(
            messages=messages,
            tools=[f.to_openai() for f in functions],
            tool_choice="required",
            parallel_tool_calls=False,
        )

    async def complete(self, messages: list[dict[str, Any]]) -> LLMAnswer:
        """A plain completion."""
        return await self._create(messages=messages)

    async def _create(self, **kwargs: Any) -> LLMAnswer:
        if not self.tracing.enabled:
            return await self._call(**kwargs)
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
                answer = await self._call(extra_headers=headers, **kwargs)
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

    async def _call(self, **kwargs: Any) -> LLMAnswer:
        import openai  # loaded with the client (bootstrap.make_llm), so this is a lookup

        try:
            response = await self.client.chat.completions.create(model=self.model, **kwargs)
        except openai.APITimeoutError:
            raise LLMUnavailableError("the LLM endpoint timed out") from None
        except openai.APIConnectionError:
            raise LLMUnavailableError(
                "could not connect to the LLM endpoint (check OPENAI_BASE_URL)"
            ) from None
        except openai.RateLimitError:
            raise LLMUnavailableError("the LLM endpoint answered 429 (rate limited)") from None
        except openai.InternalServerError as exc:
            raise LLMUnavailableError(
                f"the LLM endpoint answered {exc.status_code} (server error)"
            ) from None
        except openai.AuthenticationError:
            raise LLMError(
                "the LLM endpoint refused the credentials (check OPENAI_API_KEY)"
            ) from None
        except openai.APIStatusError as exc:
            raise LLMError(f"the LLM endpoint rejected the request ({exc.status_code})") from None
        except openai.APIError as exc:
            raise LLMError(
                f"the LLM endpoint gave an unusable answer ({type(exc).__name__})"
            ) from None
        if not response.choices:
            raise LLMError("the LLM endpoint answered with no choices")
        choice = response.choices[0]
        message = choice.message
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
            for c in (message.tool_calls or [])
            if getattr(c, "function", None) is not None
        ]
        usage = response.usage
        return LLMAnswer(
            tool_calls=calls,
            content=message.content,
            refusal=getattr(message, "refusal", None),
            finish_reason=choice.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )
