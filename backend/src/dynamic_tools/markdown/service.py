r"""MarkdownWorkflowService: the five markdown workflow tools, per session, state in a store.

The model drives the workflow (docs/markdown-workflows.md): ``load`` parses it,
``execute_step`` hands out the
enriched prompt of the step at hand, the model calls the step's tools, evaluates the assertions
and ``report``\ s back; the service records the outcome, merges the output variables and
answers with the next step's prompt, or the completion, or the failure (fail-fast: the steps
after a failed one are skipped). ``state`` and ``reset`` do what they say. The rules of order
and retry are those of :mod:`dynamic_tools.markdown.state`.

**Sessions.** Every call names a session id; each session has its own workflow. The state lives
in a :class:`SessionStore` (the database), is changed atomically, and survives a restart. The
MCP adapter uses :func:`session_key`: the client's ``session_id`` argument when given, else the
MCP session id. Answers repeat the id, so a client reconnecting after a restart (new MCP
session) carries on by passing ``session_id``.

**Errors** are :class:`~dynamic_tools.errors.MarkdownWorkflowError` (``error_type``,
``message``, ``line``, ``suggestion``); a call that raises changes nothing.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from dynamic_tools.markdown import errors, views
from dynamic_tools.markdown.models import MarkdownWorkflow
from dynamic_tools.markdown.parser import parse_markdown
from dynamic_tools.markdown.state import SessionState

T = TypeVar("T")
MAX_BYTES = 1_000_000
SUFFIXES = (".md", ".markdown")
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:@-]{1,255}$")


class SessionStore(Protocol):
    """Where session states live (``persistence.markdown_store.MarkdownSessionStore``)."""

    async def get(self, session_id: str) -> dict[str, Any] | None:
        """The session's state as stored, or None."""
        ...

    async def update(
        self,
        session_id: str,
        change: Callable[[dict[str, Any] | None], tuple[dict[str, Any] | None, T]],
    ) -> T:
        """Apply ``change`` atomically (new state, or None: no write); returns its result."""
        ...


def session_key(transport_session_id: str | None, requested: str | None) -> str:
    """The session a call is about: ``requested`` (a client's ``session_id``) or the transport's."""
    key = requested or transport_session_id
    if not key:
        raise errors.invalid_request(
            "this call names no session: the connection has no MCP session id",
            "Pass 'session_id': any stable id you choose (e.g. a UUID), the same on every call "
            "of this workflow.",
        )
    if not _SESSION_ID.match(key):
        raise errors.invalid_request(
            f"session_id '{key[:80]}' is not 1-255 letters, digits or '_.:@-'",
            "Use a plain id such as a UUID.",
        )
    return key


class MarkdownWorkflowService:
    """The five markdown workflow tools over a :class:`SessionStore` (see the module docstring)."""

    def __init__(
        self,
        store: SessionStore,
        registry_root: Path,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store = store
        self.registry_root = registry_root
        self._clock = clock or (lambda: datetime.now(UTC))

    def with_store(self, store: SessionStore) -> MarkdownWorkflowService:
        """The same service over ``store`` (one principal's sessions)."""
        return MarkdownWorkflowService(store, self.registry_root, clock=self._clock)

    # --- load_workflow ------------------------------------------------------------------------
    async def load(
        self,
        session_id: str,
        *,
        path: str | None = None,
        content: str | None = None,
        variables: dict[str, Any] | None = None,
        callable_tools: set[str],
    ) -> dict[str, Any]:
        """Parse a workflow (a file under the registry root, or markdown text) into the session.

        Checks, before anything is stored: the format; every tool a step names is in
        ``callable_tools`` (``unknown_tool``, naming the step, the line and close matches); every
        variable read before a step sets it is in ``variables`` (``variable_missing``). A load
        replaces the session's previous workflow.

        Returns ``{"session_id", "status": "loaded", "workflow": {"title", "source",
        "description", "step_count", "steps": [{"step_number", "name", "section", "line",
        "tools", "inputs", "outputs", "assertion_count"}], "required_inputs"}, "variables",
        "current_step": 0, "replaced": <previous title> | None, "next_action"}``.
        """
        if (path is None) == (content is None):
            raise errors.invalid_request(
                "give exactly one of 'path' and 'content'",
                "Pass 'path' (a .md file in the registry directory, e.g. "
                "markdown/book_flight.md) or 'content' (the markdown text itself).",
            )
        if content is not None:
            source, text = "content", content
        else:
            assert path is not None
            source, text = await asyncio.to_thread(self._read, path)
        if len(text.encode("utf-8")) > MAX_BYTES:
            raise errors.invalid_format(f"the workflow is larger than {MAX_BYTES} bytes", None)
        workflow = parse_markdown(text, source=source)
        _check_tools(workflow, callable_tools)
        given = dict(variables or {})
        _check_inputs(workflow, given)
        now = self._now()

        def change(current: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
            state = SessionState.start(session_id, workflow, given, now)
            replaced = current.get("workflow", {}).get("title") if current else None
            answer = {
                "session_id": session_id,
                "status": "loaded",
                "workflow": views.workflow_summary(state),
                "variables": state.variables,
                "current_step": 0,
                "replaced": replaced,
                "next_action": (
                    f"Call execute_workflow_step (session_id '{session_id}') to get the prompt "
                    f"of step 0 ('{workflow.steps[0].name}')."
                ),
            }
            return _dump(state), answer

        return await self.store.update(session_id, change)

    # --- execute_workflow_step ------------------------------------------------------------------
    async def execute_step(
        self, session_id: str, step: int | None = None, *, callable_tools: set[str] | None = None
    ) -> dict[str, Any]:
        """The enriched prompt of the step at hand (``step``, if given, must be that step).

        Puts the step in progress; calling again returns the same prompt. After a failure it
        retries the failed step (a new attempt; the skipped steps are pending again). With
        ``callable_tools``, the step's tools are checked again (``unknown_tool``).

        Returns :func:`views.step_view`: ``{"session_id", "status": "in_progress",
        "step_number", "step_name", "total_steps", "attempt", "line", "tools", "inputs"
        (name → value), "assertions" (resolved texts), "outputs" ([{"source", "variable"}]),
        "prompt", "report_schema", "next_action"}``; once the workflow is complete,
        :func:`views.completed_view`: ``{"session_id", "status": "completed",
        "workflow_status", "summary", "variables", "next_action"}``.
        """
        now = self._now()

        def change(current: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any]]:
            state = _restore(session_id, current)
            if state.status == "completed":
                return None, views.completed_view(state)
            target = step if step is not None else state.current
            if callable_tools is not None and target is not None and 0 <= target < len(state.steps):
                _check_tools(state.workflow, callable_tools, only=target)
            parsed, fresh = state.begin(step, now)
            return (_dump(state) if fresh else None), views.step_view(state, parsed)

        return await self.store.update(session_id, change)

    # --- report_step_result ---------------------------------------------------------------------
    async def report(
        self,
        session_id: str,
        step: int,
        status: str,
        assertions: list[dict[str, Any]] | None = None,
        outputs: dict[str, Any] | None = None,
        notes: str = "",
    ) -> dict[str, Any]:
        """Record the model's result for step ``step`` (the tool's ``step_number``).

        ``assertions`` are the tool's ``assertion_results`` (``[{"assertion", "passed",
        "detail"}]``, one per assertion), ``outputs`` its ``output_variables``, ``notes`` its
        ``error_message``. When the step passed and another follows, that step is put in
        progress and its prompt is part of the answer.

        Returns ``{"session_id", "recorded": {"step_number", "step_name", "status",
        "attempt", "assertion_results", "output_variables", "error_message"},
        "workflow_status": "running" | "completed" | "failed", "variables", "warnings",
        "next_step": <step_view> | None, "skipped_steps": [numbers], "summary": <counts>,
        "next_action"}``.
        """
        now = self._now()

        def change(current: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
            state = _restore(session_id, current)
            record, warnings = state.record(
                step, status, assertions or [], outputs or {}, notes, now
            )
            answer: dict[str, Any] = {
                "session_id": session_id,
                "recorded": {
                    "step_number": record.number,
                    "step_name": record.name,
                    "status": record.status,
                    "attempt": record.attempts,
                    "assertion_results": [r.model_dump() for r in record.assertion_results],
                    "output_variables": record.output_variables,
                    "error_message": record.error_message,
                },
                "workflow_status": state.status,
                "variables": state.variables,
                "warnings": warnings,
                "next_step": None,
                "skipped_steps": [r.number for r in state.steps if r.status == "skipped"],
            }
            if state.status == "failed":
                answer["next_action"] = views.failed_next_action(state, record.number)
            elif state.status == "completed":
                answer["next_action"] = views.completed_view(state)["next_action"]
            else:
                answer.update(self._next_step(state, now))
            answer["summary"] = views.counts(state)
            return _dump(state), answer

        return await self.store.update(session_id, change)

    def _next_step(self, state: SessionState, now: str) -> dict[str, Any]:
        try:
            parsed, _ = state.begin(None, now)
        except errors.MarkdownWorkflowError as exc:  # e.g. a variable no step could set
            return {"next_action": f"Call execute_workflow_step; it will report: {exc.message}"}
        view = views.step_view(state, parsed)
        return {
            "next_step": view,
            "next_action": f"Step {parsed.number} ('{parsed.name}') is next; its prompt is in "
            f"next_step.prompt. {view['next_action']}",
        }

    # --- get_workflow_state / reset_workflow ----------------------------------------------------
    async def state(self, session_id: str) -> dict[str, Any]:
        """The session's progress: :func:`views.state_view` (``{"session_id", "workflow",
        "workflow_status", "current_step", "counts", "variables", "steps": [{"step_number",
        "name", "line", "tools", "status", "attempts", "assertion_results",
        "output_variables", "error_message", "started_at", "reported_at"}], "loaded_at",
        "updated_at", "history", "next_action"}``).
        """  # noqa: D205
        return views.state_view(_restore(session_id, await self.store.get(session_id)))

    async def reset(self, session_id: str) -> dict[str, Any]:
        """Back to step 0 with the variables given at load, keeping the loaded workflow.

        Returns ``{"session_id", "status": "reset", "workflow", "variables",
        "current_step": 0, "next_action"}``.
        """
        now = self._now()

        def change(current: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
            state = _restore(session_id, current)
            state.reset(now)
            answer = {
                "session_id": session_id,
                "status": "reset",
                "workflow": views.workflow_summary(state),
                "variables": state.variables,
                "current_step": 0,
                "next_action": views.state_next_action(state),
            }
            return _dump(state), answer

        return await self.store.update(session_id, change)

    # --- files ----------------------------------------------------------------------------------
    def markdown_files(self) -> list[str]:
        """The markdown files under the registry root, as paths relative to it."""
        root = self.registry_root
        if not root.is_dir():
            return []
        found = (p for suffix in SUFFIXES for p in root.rglob(f"*{suffix}") if p.is_file())
        return sorted(p.relative_to(root).as_posix() for p in found)

    def _read(self, path: str) -> tuple[str, str]:
        """``(relative path, text)`` of a workflow file inside the registry root."""
        try:
            return self._read_file(path)
        except (OSError, RuntimeError, ValueError) as exc:
            # A name the OS cannot take (NUL, too long, a symbolic link loop): nothing read.
            reason = getattr(exc, "strerror", None) or str(exc)
            shown = path.encode("unicode_escape").decode("ascii")
            raise errors.file_not_found(
                shown, f"it is not a usable path ({reason})", available=self.markdown_files()
            ) from None

    def _read_file(self, path: str) -> tuple[str, str]:
        root = self.registry_root.resolve()
        candidates = [Path(path)] if Path(path).is_absolute() else [root / path]
        if not Path(path).is_absolute() and len(Path(path).parts) == 1:
            candidates.append(root / "markdown" / path)
        for candidate in candidates:
            resolved = candidate.resolve()
            if not resolved.is_relative_to(root):
                raise errors.file_not_found(
                    path, "it is outside the registry directory", available=self.markdown_files()
                )
            if resolved.is_file():
                if resolved.suffix.lower() not in SUFFIXES:
                    raise errors.file_not_found(
                        path, "it is not a markdown file (.md)", available=self.markdown_files()
                    )
                if resolved.stat().st_size > MAX_BYTES:
                    raise errors.invalid_format(f"'{path}' is larger than {MAX_BYTES} bytes", None)
                try:
                    text = resolved.read_text(encoding="utf-8")
                except UnicodeDecodeError as exc:
                    raise errors.invalid_format(
                        f"'{path}' is not UTF-8 text ({exc})", None
                    ) from None
                return resolved.relative_to(root).as_posix(), text
        raise errors.file_not_found(
            path, "no such file in the registry directory", available=self.markdown_files()
        )

    def _now(self) -> str:
        return self._clock().astimezone(UTC).isoformat()


def _restore(session_id: str, stored: dict[str, Any] | None) -> SessionState:
    if stored is None:
        raise errors.no_workflow_loaded(session_id)
    return SessionState.model_validate(stored)


def _dump(state: SessionState) -> dict[str, Any]:
    return state.model_dump(mode="json")


def _check_tools(
    workflow: MarkdownWorkflow, callable_tools: set[str], *, only: int | None = None
) -> None:
    steps = workflow.steps if only is None else [workflow.steps[only]]
    unknown = [
        (step, tool) for step in steps for tool in step.tools if tool.name not in callable_tools
    ]
    if unknown:
        step, tool = unknown[0]
        raise errors.unknown_tool(
            step.name,
            tool.name,
            tool.line,
            callable_tools=sorted(callable_tools),
            unknown=[
                {"step_number": s.number, "step": s.name, "tool": t.name, "line": t.line}
                for s, t in unknown
            ],
        )


def _check_inputs(workflow: MarkdownWorkflow, given: dict[str, Any]) -> None:
    missing = [use for use in workflow.required_inputs if given.get(use.name) is None]
    if missing:
        first = missing[0]
        step = next(s for s in workflow.steps if any(u.name == first.name for u in s.reads))
        names = [use.name for use in missing]
        example = ", ".join(f'"{name}": ...' for name in names)
        raise errors.variable_missing(
            first.name,
            first.line,
            step=step.name,
            when="at load (no earlier step sets it)",
            suggestion=(
                f"Call load_workflow again with variables {{{example}}}: the workflow needs "
                f"{', '.join(names)} from you (ask the user for any you do not know)."
            ),
        )
