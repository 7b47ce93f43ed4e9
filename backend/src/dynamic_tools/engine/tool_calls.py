"""One call node: attempts as durable steps, retries with backoff, fallback or failure.

Each attempt is one step named ``call:<node>:<attempt>`` whose recorded result is a
:class:`~dynamic_tools.engine.call_record.CallRecord` as JSON (never an exception), so a
replayed run sees the same outcome. The idempotency key is the
same for every attempt of the same node (and foreach item): the API can tell a retry from a
new operation. ``sql_query`` runs here, in memory, over the run's named outputs.

An answer nested deeper than :data:`~dynamic_tools.safe_parsing.MAX_VALUE_DEPTH` levels (a JSON
answer the HTTP sender kept as text for that reason, or a deeper value from another runner) is
marked ``too_deep`` in its record: criteria, ``success``, ``retry_if`` and named outputs that
read ``$result`` then fail naming the limit, instead of recursing into it.

Whatever a tool runner raises fails that attempt with a recorded failure (kind ``transport``,
``timeout`` or ``refused`` from :class:`ToolCallFailed`, ``error`` for anything else, which is
never retried); it never escapes the step, so no run is left without an outcome. A call that
gives up says what answered and whether it was retried (:func:`final_message`); with a
``fallback``, the failure goes to the fallback target as ``$error``.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.call_context import CallContext
from dynamic_tools.engine.call_record import CallFailure, CallRecord
from dynamic_tools.engine.criteria import headers_named, kept_headers, pattern_holds
from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.expressions import evaluate, parse_expression
from dynamic_tools.engine.journal import from_json, to_json
from dynamic_tools.engine.ports import ToolCallFailed, ToolRunner
from dynamic_tools.engine.references import render, resolve_reference
from dynamic_tools.engine.retry import parse_retry_after, retry_delay, should_retry
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.sql_query import SqlQueryError, run_sql_query
from dynamic_tools.engine.state import FallbackTriggered, RunFailed
from dynamic_tools.safe_parsing import MAX_VALUE_DEPTH, TooDeep, find_too_deep, loads_json

if TYPE_CHECKING:
    from dynamic_tools.engine.nodes.call import CallNode

_DETAIL_CHARS = 200


async def call_with_retries(
    ctx: CallContext,
    node: CallNode,
    full_id: str,
    args: Any,
    *,
    idempotency_key: str,
    scope: Scope,
) -> Any:
    """The body of the first successful attempt; raises RunFailed or FallbackTriggered."""
    state = ctx.state
    retries = node.on_error.retry if node.on_error else 0
    if node.call == "rest_call" and isinstance(args, dict) and "base_url" not in args:
        args = {**args, "base_url": ctx.base_url}
    wanted = answer_headers(node)
    attempt = 0
    while True:
        attempt += 1
        state.attempts = attempt
        if node.call == "sql_query":  # CPU-bound and time-limited: keep the loop free
            one_attempt = functools.partial(asyncio.to_thread, _sql, args, scope)
        else:
            one_attempt = functools.partial(
                _call_tool, ctx.tools, node.call, args, idempotency_key, node.timeout, wanted
            )
        journaled = await ctx.steps.step(f"call:{full_id}:{attempt}", one_attempt)
        record = _judged(node, from_json(CallRecord, journaled), scope, full_id)
        if record.ok:
            state.detail = {"status_code": record.status_code}
            if node.outputs is not None:
                return render(node.outputs, _answer(scope, record).lookup, node_id=full_id)
            return record.body
        failure = record.failure or CallFailure("error", "the attempt failed")
        await ctx.emit(
            ev.AttemptFailed(
                node_id=full_id,
                tool=node.call,
                attempt=attempt,
                max_attempts=1 + retries,
                error=failure.message,
                status_code=failure.status_code,
            )
        )
        if should_retry(node.on_error, failure, attempt) and _retry_if(
            node, record, scope, full_id
        ):
            assert node.on_error is not None
            delay = retry_delay(node.on_error, attempt, failure, seed=f"{ctx.run_id}:{full_id}")
            next_at = (datetime.now(UTC) + timedelta(seconds=delay)).isoformat(
                timespec="milliseconds"
            )
            state.detail = {
                "next_attempt": attempt + 1,
                "next_attempt_at": next_at,
                "last_error": failure.message,
            }
            await ctx.emit(
                ev.RetryScheduled(
                    node_id=full_id,
                    tool=node.call,
                    attempt=attempt + 1,
                    max_attempts=1 + retries,
                    delay_s=delay,
                    next_attempt_at=next_at,
                )
            )
            await ctx.steps.sleep(f"sleep:{full_id}:{attempt}", delay)
            continue
        message = final_message(node.call, failure, attempt)
        said = api_message(failure.status_code, record.body)
        state.detail = {
            "tool": node.call,
            "status_code": failure.status_code,
            "api_message": said,
            "body": record.body,
        }
        if node.on_error and node.on_error.fallback:
            raise FallbackTriggered(
                message,
                node.on_error.fallback,
                failure={
                    "node_id": full_id,
                    "call": node.call,
                    "message": message,
                    "kind": failure.kind,
                    "status_code": failure.status_code,
                    "api_message": said,
                    "attempts": attempt,
                    "body": record.body,
                },
            )
        raise RunFailed(
            message,
            node_id=full_id,
            context={
                "tool": node.call,
                "status_code": failure.status_code,
                "api_message": said,
                "attempts": attempt,
            },
            attempt=attempt,
        )


def final_message(call: str, failure: CallFailure, attempts: int) -> str:
    """The error of a call that gave up: what answered, and whether retries were made.

    One attempt: ``create_booking answered HTTP 409 Conflict: flight … is sold out`` (or
    ``target failed: <why>``); more: ``target failed after 3 attempts: <last failure>``.
    """
    if attempts > 1:
        return f"{call} failed after {attempts} attempts: {failure.message}"
    if failure.kind == "status":
        return f"{call} answered {failure.message}"
    return f"{call} failed: {failure.message}"


async def _call_tool(
    tools: ToolRunner,
    tool: str,
    args: Any,
    key: str,
    timeout_s: float | None,
    wanted_headers: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One attempt of a tool call: its :class:`CallRecord` as the step journals it (JSON)."""
    try:
        call = tools.call(tool, args, idempotency_key=key, timeout_s=timeout_s)
        result = await (asyncio.wait_for(call, timeout_s) if timeout_s else call)
        answer = CallRecord(
            ok=result.ok,
            status_code=result.status_code,
            body=result.body,
            headers=kept_headers(result.headers, wanted_headers),
            too_deep=MAX_VALUE_DEPTH if _json_kept_as_text(result.body, result.headers) else None,
        )
        if not result.ok:
            headers = {k.lower(): v for k, v in result.headers.items()}
            failure = CallFailure(
                "status",
                status_message(result.status_code, result.body),
                status_code=result.status_code,
                retry_after_s=parse_retry_after(headers.get("retry-after")),
            )
            answer = replace(answer, failure=failure)
    except TimeoutError:
        answer = _failed("timeout", f"timed out after {timeout_s} s")
    except ToolCallFailed as exc:
        answer = _failed(exc.kind, exc.message or type(exc).__name__)
    except Exception as exc:  # a runner's bug or an unmapped error: fail the attempt, not the run
        # Only the type is shown: an unknown exception's text may hold anything (a URL with
        # its query string, a header value); runners map what they know to ToolCallFailed.
        answer = _failed("error", f"the call raised an unexpected {type(exc).__name__}")
    return to_json(answer)  # type: ignore[no-any-return]


def _json_kept_as_text(body: Any, headers: Any) -> bool:
    """Whether a JSON answer came as text because it nests past the limit.

    ``http/sender.py`` keeps such an answer as text; anything else that is not JSON stays
    plain text.
    """
    if not isinstance(body, str) or not body.lstrip().startswith(("{", "[")):
        return False
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    if "json" not in content_type.lower():
        return False
    try:
        loads_json(body, MAX_VALUE_DEPTH)
    except TooDeep:
        return True
    except ValueError:  # not JSON after all (or cut short): plain text
        return False
    return False


def status_message(status: int, body: Any) -> str:
    """``HTTP 409 Conflict: flight … is sold out``: status, phrase and the API's own message.

    The message is taken from the body when it has one (see :func:`body_message`).
    """
    text = f"HTTP {status} {_phrase(status)}".rstrip()
    detail = body_message(body)
    return f"{text}: {detail}" if detail else text


def api_message(status: int | None, body: Any) -> str | None:
    """What the API said about a failed call, in its own words, short.

    The body's message (:func:`body_message`), else the status text (``Not Found``).
    """
    if status is None:
        return body_message(body)
    return body_message(body) or _phrase(status) or f"HTTP {status}"


def body_message(body: Any) -> str | None:
    """The message of an error body, on one line, at most 200 characters.

    From problem+json ``detail`` / ``title``, ``error.message``, ``message``, ``errors[0]``
    (GraphQL), or a text body, with the ``field`` it names; None when it says nothing readable.
    """
    candidates: list[Any] = []
    field: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            candidates += [error.get("message"), error.get("detail")]
            field = error.get("field")
        candidates += [error, body.get("detail"), body.get("message"), body.get("title")]
        errors = body.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            candidates.append(errors[0].get("message"))
        field = field or body.get("field")
    elif isinstance(body, str) and not body.lstrip().startswith("<"):  # not an HTML page
        candidates.append(body)
    for value in candidates:
        if isinstance(value, str) and value.strip():
            line = " ".join(value.split())
            if isinstance(field, str) and field and field not in line:
                line += f" (field {field})"
            return line if len(line) <= _DETAIL_CHARS else line[: _DETAIL_CHARS - 3] + "..."
    return None


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _sql(args: Any, scope: Scope) -> dict[str, Any]:
    """One ``sql_query`` attempt: its :class:`CallRecord` as the step journals it (JSON)."""
    try:
        rows = run_sql_query(str(args.get("sql", "")), scope.outputs)
    except SqlQueryError as exc:
        return to_json(_failed("refused", exc.message))  # type: ignore[no-any-return]
    return to_json(CallRecord(ok=True, status_code=None, body=rows))  # type: ignore[no-any-return]


def answer_headers(node: CallNode) -> frozenset[str]:
    """The response headers a call node reads (``$headers.<name>``), recorded with its step."""
    texts: list[Any] = [node.success, node.outputs]
    texts += [(c.condition, c.context) for c in node.criteria]
    if node.on_error is not None:
        texts.append(node.on_error.retry_if)
    return headers_named(texts)


def _answer(scope: Scope, record: CallRecord) -> Scope:
    """``scope`` plus the answer: ``$result``, ``$status``, ``$headers``.

    When the answer nests past the limit, reading ``$result`` fails naming it.
    """
    answer = (
        scope.with_local("result", record.body)
        .with_local("status", record.status_code)
        .with_local("headers", record.headers)
    )
    limit = record.too_deep
    return _TooDeepAnswer(answer, limit) if limit else answer


class _TooDeepAnswer(Scope):
    """An answer's scope whose ``$result`` nests too deep to be read."""

    def __init__(self, scope: Scope, limit: int) -> None:
        super().__init__(
            params=scope.params,
            outputs=scope.outputs,
            yields=scope.yields,
            local=scope.local,
            failure=scope.failure,
        )
        self.limit = limit

    def lookup(self, name: str) -> Any:
        """The value of ``name``; ``result`` raises :class:`UnresolvedReferenceError`."""
        if name == "result":
            raise UnresolvedReferenceError(
                f"too deep: the answer is nested past {self.limit} levels", reference="$result"
            )
        return super().lookup(name)


def _depth_marked(node: CallNode, record: CallRecord) -> CallRecord:
    """``record``, marked ``too_deep`` when the node reads an answer nested past the limit.

    A JSON answer the sender kept as text was marked when it came; a value another runner
    gave (parsed already) is measured here, only when something reads the answer.
    """
    body = record.body
    if record.too_deep is not None or not isinstance(body, dict | list):
        return record
    reads = node.criteria or node.success or node.outputs is not None or node.on_error
    if reads and find_too_deep(body, MAX_VALUE_DEPTH) is not None:
        return replace(record, too_deep=MAX_VALUE_DEPTH)
    return record


def _judged(node: CallNode, record: CallRecord, scope: Scope, full_id: str) -> CallRecord:
    """The attempt's record once the node's criteria (or ``success``) judged its answer.

    With ``criteria`` an answer (any status) succeeds exactly when they all hold; without,
    a 2xx/3xx answer succeeds when ``success`` (if any) holds. No answer stays a failure.
    """
    record = _depth_marked(node, record)
    if node.criteria:
        if record.status_code is None:
            return record
        unmet = _unmet_criterion(node, record, scope, full_id)
        if unmet is None:  # the answer as a success, whatever its status
            return replace(record, ok=True, failure=None)
        failure = CallFailure(
            "criteria",
            f"success criteria not met: {unmet}",
            status_code=record.status_code,
            retry_after_s=record.failure.retry_after_s if record.failure else None,
        )
        return replace(record, ok=False, failure=failure)
    if record.ok and node.success and not _holds(node.success, record, scope, full_id):
        failure = CallFailure(
            "success_check",
            f"success criteria not met: {node.success}",
            status_code=record.status_code,
        )
        return replace(record, ok=False, failure=failure)
    return record


def _unmet_criterion(node: CallNode, record: CallRecord, scope: Scope, full_id: str) -> str | None:
    """The first criterion that does not hold, described; None when all hold."""
    local = _answer(scope, record)
    for criterion in node.criteria:
        if criterion.type == "simple":
            try:
                held = _holds(criterion.condition, record, scope, full_id)
            except (ExpressionError, UnresolvedReferenceError) as exc:
                return f"{criterion.condition} ({exc.message})"
        else:
            try:
                context = render(criterion.context or "$result", local.lookup, node_id=full_id)
            except UnresolvedReferenceError as exc:
                return f"{criterion.condition} ({exc.message})"
            try:
                held = pattern_holds(criterion, context)
            except TooDeep as exc:
                where = criterion.context or "$result"
                return f"{criterion.condition} (too deep: {where} nested past {exc.limit} levels)"
        if not held:
            kind = "" if criterion.type == "simple" else f" ({criterion.type})"
            return f"{criterion.condition}{kind}"
    return None


def _holds(text: str, record: CallRecord, scope: Scope, full_id: str) -> bool:
    """Whether expression ``text`` holds over the answer of ``record``."""
    local = _answer(scope, record)
    value = evaluate(
        parse_expression(text, node_id=full_id),
        lambda ref: resolve_reference(ref, local.lookup, node_id=full_id),
        node_id=full_id,
    )
    return bool(value)


def _retry_if(node: CallNode, record: CallRecord, scope: Scope, full_id: str) -> bool:
    """Whether ``on_error.retry_if`` (if any) lets a failed attempt be retried.

    An answer it cannot be read on (no answer at all, a missing field) does not retry.
    """
    condition = node.on_error.retry_if if node.on_error else None
    if not condition:
        return True
    try:
        return _holds(condition, record, scope, full_id)
    except (ExpressionError, UnresolvedReferenceError):
        return False


def _failed(kind: str, message: str) -> CallRecord:
    """An attempt that got no answer."""
    return CallRecord(ok=False, failure=CallFailure(kind, message))


__all__ = [
    "answer_headers",
    "api_message",
    "body_message",
    "call_with_retries",
    "final_message",
    "status_message",
]
