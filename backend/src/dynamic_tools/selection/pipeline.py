"""The single-shot pipeline behind ``POST /workflow``.

Stages, each timed, each with its own ``error_stage`` (README, "How the pipeline behaves"):

1. ``tool_retrieval`` — the ids are looked up; every missing id is listed.
2. ``tool_context_generation`` — BM25 narrows many candidates to the top k; the tools are
   written as documentation and as functions (strict where the schema allows).
3. ``llm_selection`` — the model calls one function; its arguments are parsed, validated
   with jsonschema and placed into a request built in code. An invalid answer is re-asked
   with the error fed back, at most ``llm_validation_retries`` times (tenacity).
4. ``api_execution`` — the request is sent (SSRF guard, no redirects, timeouts). An HTTP
   error status is still ``success``: the API answered (GraphQL ``errors`` too: they are in
   ``raw_response.graphql_errors`` and a warning).
5. ``result_sql`` — only with ``sql``: the query runs over the answer's rows in the read-only
   sandbox of the engine's ``sql_query`` (``result_sql.py``); ``sql`` in the answer says what
   ran and what it returned. Formatting then reads those rows.
6. ``response_formatting`` — optional; a failure keeps ``success`` and adds a warning.

With tracing on, a run is a ``pipeline`` span (``dt.outcome``, the chosen ``dt.tool``, token
usage) with a child span per stage (``dt.stage``, ``dt.outcome``; ``error.type`` is the
error's code); the API call's HTTP span is under ``api_execution``.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from loguru import logger
from opentelemetry.trace import Span

from dynamic_tools.errors import (
    ConfigurationError,
    DynamicToolsError,
    InvalidInputError,
    LLMError,
    LLMInvalidAnswerError,
    NoSuitableToolError,
)
from dynamic_tools.http.invoker import ArgumentsRejected, ToolInvoker
from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.observability.tracing import OUTCOME, STAGE, TOOL, Tracing, mark_error
from dynamic_tools.selection.function_schema import (
    NONE_SUITABLE,
    FunctionSpec,
    drop_nulls_for_optional,
    none_suitable_function,
)
from dynamic_tools.selection.llm import (
    LLMAnswer,
    LLMClient,
    assistant_turn,
    call_result,
    counted,
)
from dynamic_tools.selection.models import ErrorStage, WorkflowRequest, WorkflowResponse
from dynamic_tools.selection.prepared import PreparedTool, PreparedTools
from dynamic_tools.selection.prompts import format_messages, selection_messages
from dynamic_tools.selection.ranker import ToolRanker
from dynamic_tools.selection.result_sql import apply_sql
from dynamic_tools.tools.context import CONTEXT_HEADER
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.registry import ToolRegistry

#: the settings that configure an LLM (either one), named in a "not configured" error
LLM_SETTINGS = ("OPENAI_API_KEY", "OPENAI_BASE_URL")


@dataclass(frozen=True)
class PipelineOptions:
    """Tunables of the pipeline, from settings."""

    top_k: int = 8
    validation_retries: int = 2
    format_max_chars: int = 8000
    context_max_chars: int = 120_000
    not_configured_message: str = (
        "no LLM is configured: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
        "(an OpenAI-compatible server such as Ollama or vLLM)"
    )


class ToolSource(Protocol):
    """Where tool ids are looked up: the registry, or an MCP session's own tools."""

    def get_multiple(self, names: list[str]) -> tuple[list[ToolConfig], list[str]]:
        """The tools found (in order) and the names not found."""
        ...


@dataclass(frozen=True)
class Selection:
    """The validated outcome of the LLM stage."""

    tool: ToolConfig
    arguments: dict[str, Any]
    request: PreparedRequest
    attempts: int


NONE_SUITABLE_FUNCTION = none_suitable_function()


class _StageFailed(Exception):
    def __init__(self, stage: ErrorStage, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


class _InvalidAnswer(Exception):
    """The model's answer did not validate; ``feedback`` is what it is told."""

    def __init__(self, feedback: str, answer: LLMAnswer) -> None:
        super().__init__(feedback)
        self.feedback = feedback
        self.answer = answer


class SingleShotPipeline:
    """Instructions + tool ids → one validated API call → optional formatted answer."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        llm: LLMClient | None,
        invoker: ToolInvoker,
        options: PipelineOptions | None = None,
        ranker: ToolRanker | None = None,
        tracing: Tracing | None = None,
    ) -> None:
        self.registry = registry
        self.llm = llm
        self.invoker = invoker
        self.options = options or PipelineOptions()
        self.ranker = ranker or ToolRanker()
        self.prepared = PreparedTools()
        self.tracing = tracing or Tracing.off()

    async def run(
        self,
        request: WorkflowRequest,
        *,
        source: ToolSource | None = None,
        extra_headers: dict[str, str] | None = None,
    ) -> WorkflowResponse:
        """Run every stage; never raises for a failure of a stage.

        ``source`` replaces the registry as the place tool ids are looked up (an MCP session's
        own tools); ``extra_headers`` are added to the outbound call and never shown.
        """
        response = WorkflowResponse(status="success")
        started = time.perf_counter()
        with self.tracing.span("pipeline") as span:
            try:
                await self._run(request, response, source or self.registry, extra_headers)
            except _StageFailed as failed:
                response.status = "error"
                response.error = failed.message
                response.error_stage = failed.stage
                logger.bind(stage=failed.stage).info(
                    "single-shot pipeline failed: {}", failed.message
                )
                mark_error(span, failed.stage)
            span.set_attributes(
                {
                    OUTCOME: "succeeded" if response.status == "success" else "failed",
                    "gen_ai.usage.input_tokens": response.usage.prompt_tokens,
                    "gen_ai.usage.output_tokens": response.usage.completion_tokens,
                }
            )
            if response.selected_tool:
                span.set_attribute(TOOL, response.selected_tool)
        response.timings_ms["total"] = _ms_since(started)
        return response

    async def _run(
        self,
        request: WorkflowRequest,
        response: WorkflowResponse,
        source: ToolSource,
        extra_headers: dict[str, str] | None,
    ) -> None:
        with self._stage("tool_retrieval", response):
            tools, missing = source.get_multiple(request.tool_ids)
            if missing:
                raise _StageFailed("tool_retrieval", f"Tools not found in registry: {missing}")

        with self._stage("tool_context_generation", response):
            if len(tools) > self.options.top_k:
                narrowed = self.ranker.top_k(request.user_instructions, tools, self.options.top_k)
                response.warnings.append(
                    f"{len(tools)} candidate tools narrowed to {len(narrowed)} by BM25: "
                    + ", ".join(t.name for t in narrowed)
                )
                tools = narrowed
            prepared = [self.prepared.get(t) for t in tools]
            shown = strict = False
            if self.llm is not None:
                try:
                    shown = await self.llm.shows_functions()
                    strict = await self.llm.uses_strict()
                except LLMError:  # the endpoint cannot be probed: llm_selection says so
                    shown = strict = False
            context = CONTEXT_HEADER + "\n\n".join(p.text(functions_shown=shown) for p in prepared)
            functions = [p.function for p in prepared] + [NONE_SUITABLE_FUNCTION]
            size = sum(p.size for p in prepared)
            if size > self.options.context_max_chars:
                raise _StageFailed(
                    "tool_context_generation",
                    f"the tool context is {size} characters, over the limit of "
                    f"{self.options.context_max_chars} (LLM_CONTEXT_MAX_CHARS); pass fewer or "
                    "smaller tools",
                )
            non_strict = [f.name for f in functions if not f.strict]
            if non_strict and strict:  # a server without strict mode: nothing to say
                response.warnings.append(
                    "strict structured output not possible for: "
                    + ", ".join(non_strict)
                    + " (answers are still validated)"
                )

        with self._stage("llm_selection", response):
            if self.llm is None:
                raise _StageFailed("llm_selection", self.options.not_configured_message)
            selection = await self._select(request, prepared, functions, context, response)
            response.selected_tool = selection.tool.name
            response.arguments = selection.arguments
            response.http_spec = selection.request.http_spec()
            if selection.attempts > 1:
                response.warnings.append(
                    f"the LLM answer was corrected after {selection.attempts - 1} re-ask(s)"
                )

        with self._stage("api_execution", response):
            result = await self.invoker.send(selection.request, extra_headers=extra_headers)
            response.raw_response = result.to_dict()
            if result.truncated:
                response.warnings.append("the API response was truncated at the size limit")
            if result.graphql_errors:
                response.warnings.append(f"the API answered {result.failure_message()}")

        if request.sql is not None:
            with self._stage("result_sql", response):
                apply_sql(request.sql, response)

        if request.format_response:
            await self._format(request, selection.tool.name, response)

    async def _select(
        self,
        request: WorkflowRequest,
        tools: list[PreparedTool],
        functions: list[FunctionSpec],
        context: str,
        response: WorkflowResponse,
    ) -> Selection:
        assert self.llm is not None
        llm = self.llm
        by_name = {p.tool.name: p for p in tools}
        messages = selection_messages(request.user_instructions, context)
        offered = functions
        attempts = 0
        from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

        retrying = AsyncRetrying(
            stop=stop_after_attempt(1 + self.options.validation_retries),
            retry=retry_if_exception_type(_InvalidAnswer),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    answer = await counted(response.usage, llm.choose(messages, offered))
                    try:
                        return self._validate(answer, by_name, attempts)
                    except NoSuitableToolError:
                        if offered is functions:
                            raise
                        # the model says the tool it kept to was the wrong one: all again
                        reopened = _reopened(answer, offered)
                        messages = [*messages, *_feedback_messages(reopened)]
                        offered = functions
                        raise reopened from None
                    except _InvalidAnswer as invalid:
                        messages = [*messages, *_feedback_messages(invalid)]
                        # a re-ask keeps to the tool first chosen (or says it was wrong)
                        kept = _kept_to(invalid.answer, by_name)
                        if kept is not None:
                            offered = [by_name[kept].function, NONE_SUITABLE_FUNCTION]
                        raise
        except _InvalidAnswer as invalid:
            message = f"the LLM answer was invalid after {attempts} attempt(s): {invalid.feedback}"
            if not invalid.answer.tool_calls:
                message += f" ({invalid.answer.missing_call})"
            raise _StageFailed("llm_selection", message) from None
        except NoSuitableToolError as exc:
            raise _StageFailed("llm_selection", exc.message) from None
        except LLMError as exc:
            raise _StageFailed("llm_selection", exc.message) from None
        raise _StageFailed("llm_selection", "the LLM gave no answer")  # pragma: no cover

    def _validate(
        self, answer: LLMAnswer, by_name: dict[str, PreparedTool], attempts: int
    ) -> Selection:
        if answer.refusal:
            raise LLMInvalidAnswerError(f"the LLM refused: {answer.refusal[:300]}")
        if answer.finish_reason == "length":
            raise _InvalidAnswer(
                "the answer was cut off (finish_reason=length); answer "
                "with a single, shorter function call",
                answer,
            )
        if answer.finish_reason == "content_filter":
            raise LLMInvalidAnswerError("the LLM answer was stopped by its content filter")
        if len(answer.tool_calls) != 1:
            raise _InvalidAnswer(
                f"call exactly one function; got {len(answer.tool_calls)} calls", answer
            )
        call = answer.tool_calls[0]
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise _InvalidAnswer(
                f"the arguments of '{call.name}' are not valid JSON "
                f"({exc.msg} at position {exc.pos})",
                answer,
            ) from None
        if not isinstance(arguments, dict):
            raise _InvalidAnswer("the arguments must be a JSON object", answer)
        if call.name == NONE_SUITABLE:
            reason = str(arguments.get("reason") or "no reason given")[:500]
            raise NoSuitableToolError(f"the LLM found no suitable tool: {reason}")
        prepared = by_name.get(call.name)
        if prepared is None:
            raise _InvalidAnswer(
                f"'{call.name}' is not one of the available functions: "
                + ", ".join([*by_name, NONE_SUITABLE]),
                answer,
            )
        tool = prepared.tool
        arguments = drop_nulls_for_optional(arguments, prepared.schema)
        try:
            self.invoker.check(tool, arguments, formats=True)
        except ArgumentsRejected as rejected:
            raise _InvalidAnswer(rejected.message, answer) from None
        try:
            outbound = self.invoker.build(tool, arguments)
        except InvalidInputError as exc:
            raise _InvalidAnswer(
                f"the arguments of '{tool.name}' cannot be used: {exc.message}", answer
            ) from None
        except DynamicToolsError as exc:  # a missing secret, a URL leaving its base: not the LLM's
            raise _StageFailed("api_execution", exc.message) from None
        return Selection(tool=tool, arguments=arguments, request=outbound, attempts=attempts)

    async def _format(
        self, request: WorkflowRequest, tool: str, response: WorkflowResponse
    ) -> None:
        stage = "response_formatting"
        with self.tracing.span(stage, attributes={STAGE: stage}) as span:
            await self._format_stage(request, tool, response, span)

    async def _format_stage(
        self, request: WorkflowRequest, tool: str, response: WorkflowResponse, span: Span
    ) -> None:
        started = time.perf_counter()
        try:
            if self.llm is None:
                raise ConfigurationError(
                    self.options.not_configured_message,
                    context={"settings": list(LLM_SETTINGS), "stage": "response_formatting"},
                )
            assert response.raw_response is not None
            shown = response.raw_response
            if response.sql is not None:  # what the SQL made of the answer
                shown = {**shown, "body": response.sql.rows}
            messages, truncated = format_messages(
                request.user_instructions,
                request.response_format_instructions,
                tool,
                shown,
                max_chars=self.options.format_max_chars,
            )
            if truncated:
                response.warnings.append("the API response was truncated for formatting")
            answer = await counted(response.usage, self.llm.complete(messages))
            if answer.refusal or not (answer.content or "").strip():
                raise LLMInvalidAnswerError("the LLM gave no formatted text")
            if answer.finish_reason == "length":
                response.warnings.append(
                    "the formatted answer was cut off at the token limit (LLM_TEXT_MAX_TOKENS)"
                )
            response.formatted_response = answer.content
            span.set_attribute(OUTCOME, "succeeded")
        except DynamicToolsError as exc:
            response.warnings.append(f"response_formatting failed: {exc.message}")
            logger.bind(stage="response_formatting").warning("formatting failed: {}", exc.message)
            span.set_attribute(OUTCOME, "failed")
            mark_error(span, exc.code)
        response.timings_ms["response_formatting"] = _ms_since(started)

    @contextmanager
    def _stage(self, stage: ErrorStage, response: WorkflowResponse) -> Any:
        started = time.perf_counter()
        with self.tracing.span(stage, attributes={STAGE: stage}) as span:
            try:
                yield
            except _StageFailed as failed:
                span.set_attribute(OUTCOME, "failed")
                mark_error(span, failed.stage)
                raise
            except DynamicToolsError as exc:
                span.set_attribute(OUTCOME, "failed")
                mark_error(span, exc.code)
                raise _StageFailed(stage, exc.message) from None
            except Exception as exc:  # a bug or an unmapped failure: still this stage's error
                span.set_attribute(OUTCOME, "failed")
                mark_error(span, type(exc).__qualname__)
                logger.opt(exception=exc).bind(stage=stage).error("unexpected error in {}", stage)
                raise _StageFailed(
                    stage, f"{stage} failed on an unexpected {type(exc).__name__}"
                ) from None
            finally:
                response.timings_ms[stage] = _ms_since(started)
            span.set_attribute(OUTCOME, "succeeded")


def _feedback_messages(invalid: _InvalidAnswer) -> list[dict[str, Any]]:
    """The invalid answer and what was wrong, in shapes every server accepts."""
    answer = invalid.answer
    note = (
        f"Your previous answer was invalid: {invalid.feedback}. Call one function again "
        "with corrected arguments."
    )
    if answer.tool_calls:
        first = answer.tool_calls[0]
        if first.name == NONE_SUITABLE:
            note = invalid.feedback
        else:
            note += (
                f" Keep to '{first.name}' unless it cannot do what the user asked: then call "
                f"'{NONE_SUITABLE}' and say why."
            )
        return [assistant_turn(first, answer.content), call_result(first, note)]
    return [
        {"role": "assistant", "content": answer.content or "(no answer)"},
        {"role": "user", "content": note},
    ]


def _kept_to(answer: LLMAnswer, by_name: dict[str, PreparedTool]) -> str | None:
    """The offered tool the invalid answer chose, which the re-ask keeps to."""
    if len(answer.tool_calls) == 1 and answer.tool_calls[0].name in by_name:
        return answer.tool_calls[0].name
    return None


def _reopened(answer: LLMAnswer, offered: list[FunctionSpec]) -> _InvalidAnswer:
    """The re-ask after the model said the kept tool (``offered[0]``) does not fit."""
    return _InvalidAnswer(
        f"you said '{offered[0].name}' does not fit; choose again among all the functions", answer
    )


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
