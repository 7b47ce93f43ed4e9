"""WorkflowRepository: the workflow documents of the runtime registry directory.

Rules:
- Documents load from ``<workflows dir>/*.yaml|*.yml|*.json|*.xml`` in file-name order (hidden
  and temporary files are skipped); one document may hold several workflows.
- A file that does not load is a problem (file, line, violations); the other files still load.
- A workflow id defined in two files: the first file (name order) keeps it, and a problem names
  both files.
- Each document is validated against the registry's tools plus the built-ins and every workflow
  id; the result is kept until the tool names change or the directory is reloaded.
- A document's ``version`` is the hash of its text. A save must name the current version (or
  ask to ``overwrite``); it is validated first and nothing is written when it has errors;
  writes are atomic.
- Rename and delete edit the document's text keeping its layout (see ``workflow_files``).
- Text from callers is parsed and checked in the document workers first (:meth:`check`,
  :meth:`save_checked`; see :mod:`dynamic_tools.document_workers`), so a costly or hostile
  document never runs on the event loop and is stopped at its time budget.
"""

from __future__ import annotations

import asyncio
import builtins
import re
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynamic_tools.atomic_files import content_version, remove_atomic, write_atomic
from dynamic_tools.definitions.files import (
    EXTENSIONS,
    FILE_NAME,
    SUFFIXES,
    DocumentFile,
    Violations,
    check_version,
    read_document_file,
    rewrite_document,
    target_file,
    violation,
    workflow_calls,
)
from dynamic_tools.definitions.step_views import drawn_graph, preview_inputs, step_order
from dynamic_tools.definitions.views import (
    Deleted,
    InputsPreview,
    Problem,
    Renamed,
    SavedDocument,
    StepOrder,
    WorkflowDetail,
    WorkflowSummary,
)
from dynamic_tools.document_workers import DocumentWorkers
from dynamic_tools.engine.loaders import DocumentFormat, detect_format
from dynamic_tools.engine.loaders import load_document as parse_document
from dynamic_tools.engine.models import (
    IDENTIFIER,
    Workflow,
    WorkflowDocument,
)
from dynamic_tools.engine.params import check_values
from dynamic_tools.engine.plan import RunPlan, blocking_errors, compile_plan
from dynamic_tools.engine.triggers import ScheduleTrigger, WebhookTrigger
from dynamic_tools.engine.validator import BUILTIN_TOOLS, validate_document
from dynamic_tools.errors import (
    ConflictError,
    ConflictKind,
    InvalidInputError,
    NotFoundError,
    WorkflowInvalidError,
)
from dynamic_tools.tools.scope import ToolScope
from dynamic_tools.violations import LoadProblem, errors_only


@dataclass(frozen=True)
class PreparedRun:
    """Everything a launcher needs to start a run, checked: the plan and the checked params."""

    plan: RunPlan
    params: dict[str, Any]
    version: str
    #: what the run may call beyond the registry (a run of an MCP session's own workflow)
    scope: ToolScope | None = None

    @property
    def workflow_id(self) -> str:
        """The workflow the run starts."""
        return self.plan.workflow_id

    @property
    def document(self) -> WorkflowDocument:
        """The document the plan was compiled from (with the sub-workflows it calls)."""
        return self.plan.document

    @property
    def node_ids(self) -> list[str]:
        """The top-level nodes of the run, in order."""
        return list(self.plan.root.order)

    @classmethod
    def of_draft(
        cls,
        document: WorkflowDocument,
        workflow_id: str,
        params: dict[str, Any],
        version: str,
        scope: ToolScope | None = None,
    ) -> PreparedRun:
        """A run of a document outside the repository (a draft, a session's own).

        ``params`` are already checked; ``scope`` is the session's tools, when it has its own.
        """
        return cls(compile_plan(document, workflow_id), params, version, scope)


class WorkflowRepository:
    """The workflow documents of one directory (see the module docstring for the rules)."""

    def __init__(
        self,
        directory: Path,
        *,
        known_tools: Callable[[], Collection[str] | Mapping[str, Any]] = lambda: (),
        workers: DocumentWorkers | None = None,
    ) -> None:
        self.directory = directory
        self._known_tools = known_tools
        self.workers = workers or DocumentWorkers(workers=0)
        self._files: dict[str, DocumentFile] = {}
        self._index: dict[str, DocumentFile] = {}
        self._problems: list[LoadProblem] = []
        self._tools_seen: object = None
        self._lock = threading.RLock()
        self.generation = 0  # bumped on every load and revalidation (for cached views)

    # --- loading ---------------------------------------------------------------------------
    def reload(self) -> builtins.list[LoadProblem]:
        """Read the directory again; returns the problems (also kept in ``problems``)."""
        files: dict[str, DocumentFile] = {}
        problems: list[LoadProblem] = []
        paths = sorted(self.directory.iterdir()) if self.directory.is_dir() else []
        for path in paths:
            if path.is_file() and not path.name.startswith(".") and path.suffix in SUFFIXES:
                files[path.name] = read_document_file(path, problems)
        index: dict[str, DocumentFile] = {}
        for doc in files.values():
            for workflow_id in doc.loaded.document.workflows if doc.loaded else ():
                assert doc.loaded is not None
                if workflow_id in index:
                    first = index[workflow_id].name
                    problems.append(
                        LoadProblem(
                            doc.name,
                            "duplicate_workflow",
                            f"workflow '{workflow_id}' is defined in both {first} and "
                            f"{doc.name}; the one in {first} is used",
                            line=doc.loaded.line_of(("workflows", workflow_id)),
                        )
                    )
                    continue
                index[workflow_id] = doc
        with self._lock:
            self._files, self._index, self._problems = files, index, problems
            self._validate_all()
        return problems

    @property
    def problems(self) -> builtins.list[LoadProblem]:
        """Problems of the last load."""
        return builtins.list(self._problems)

    def _tools(self) -> frozenset[str] | dict[str, Any]:
        """What the validator knows of tools: names, or names → input schemas."""
        known = self._known_tools()
        if isinstance(known, Mapping):  # names → input schemas: call args are checked too
            return {**dict.fromkeys(BUILTIN_TOOLS), **known}
        return frozenset(known) | BUILTIN_TOOLS

    def _tools_key(self) -> object:
        """What tells a change of the registry: the schema mapping itself, or the names.

        The registry builds a new mapping when it changes; the one seen is held here, so it is
        compared by identity.
        """
        known = self._known_tools()
        return known if isinstance(known, Mapping) else frozenset(known)

    def _tools_changed(self) -> bool:
        key = self._tools_key()
        if isinstance(key, Mapping):
            return key is not self._tools_seen
        return key != self._tools_seen

    def definitions(self) -> dict[str, Workflow]:
        """Every saved workflow by id (sub-workflow arguments are checked against them)."""
        with self._lock:
            return self._workflow_defs()

    def _workflow_defs(self) -> dict[str, Workflow]:
        return {
            workflow_id: doc.loaded.document.workflows[workflow_id]
            for workflow_id, doc in self._index.items()
            if doc.loaded is not None and workflow_id in doc.loaded.document.workflows
        }

    def _validate_all(self) -> None:
        tools = self._tools()
        for doc in self._files.values():
            if doc.loaded is not None:
                report = validate_document(
                    doc.loaded, known_tools=tools, known_workflows=self._workflow_defs()
                )
                doc.violations = [v.to_dict() for v in report.violations]
                doc.report = report
        self._tools_seen = self._tools_key()
        self.generation += 1

    def _fresh(self) -> None:
        """Validate again when the registry's tool names changed since the last validation."""
        with self._lock:
            if self._tools_changed():
                self._validate_all()

    def _doc(self, workflow_id: str) -> DocumentFile:
        self._fresh()
        doc = self._index.get(workflow_id)
        if doc is None or doc.loaded is None:
            raise NotFoundError(
                f"workflow '{workflow_id}' does not exist", context={"workflow_id": workflow_id}
            )
        return doc

    def workflow(self, workflow_id: str) -> Workflow:
        """The parsed workflow; :class:`NotFoundError` when unknown."""
        loaded = self._doc(workflow_id).loaded
        assert loaded is not None
        return loaded.document.workflows[workflow_id]

    # --- reading ---------------------------------------------------------------------------
    def list(self) -> builtins.list[WorkflowSummary]:
        """Every workflow: id, description, file, format, version, params, validity."""
        self._fresh()
        return [self.summary(workflow_id, doc) for workflow_id, doc in self._index.items()]

    def _summary(self, workflow_id: str, doc: DocumentFile) -> dict[str, Any]:
        assert doc.loaded is not None
        workflow = doc.loaded.document.workflows[workflow_id]
        errors = _scoped(doc.errors, workflow_id)
        return {
            "id": workflow_id,
            "title": workflow.description.split("\n", 1)[0],
            "description": workflow.description,
            "domain": doc.loaded.document.domain,
            "file": doc.name,
            "format": doc.format,
            "version": doc.version,
            "params": {
                n: p.model_dump(mode="json", exclude_none=True) for n, p in workflow.params.items()
            },
            "valid": not errors,
            "errors": len(errors),
            "schedules": [t.name for t in workflow.triggers if isinstance(t, ScheduleTrigger)],
            "webhooks": [t.name for t in workflow.triggers if isinstance(t, WebhookTrigger)],
        }

    def summary(self, workflow_id: str, doc: DocumentFile) -> WorkflowSummary:
        """One workflow as listed."""
        return WorkflowSummary.model_validate(self._summary(workflow_id, doc))

    def get(self, workflow_id: str) -> WorkflowDetail:
        """One workflow: its document's content, format and version, parsed form, violations."""
        doc = self._doc(workflow_id)
        assert doc.loaded is not None
        workflow = doc.loaded.document.workflows[workflow_id]
        return WorkflowDetail.model_validate(
            {
                **self._summary(workflow_id, doc),
                "content": doc.text,
                "parsed": workflow.model_dump(mode="json", by_alias=True, exclude_none=True),
                "nodes": drawn_graph(workflow),
                "document_workflows": builtins.list(doc.loaded.document.workflows),
                "violations": _scoped(doc.violations, workflow_id),
            }
        )

    def validate(self, content: str, fmt: DocumentFormat | None = None) -> Violations:
        """Every violation of ``content`` (none means it can be saved and run)."""
        return check_workflow(content, fmt, self._tools(), self._workflow_defs())

    async def check(
        self,
        content: str,
        fmt: DocumentFormat | None = None,
        *,
        extra_tools: Mapping[str, Any] | None = None,
    ) -> Violations:
        """:meth:`validate` in a document worker (time and memory budget; see the module).

        ``extra_tools`` (name → input schema) are known too: tools about to be registered.
        """
        tools = self._tools()
        if extra_tools:
            known = tools if isinstance(tools, Mapping) else dict.fromkeys(tools)
            tools = {**known, **extra_tools}
        return await self.workers.run(
            check_workflow,
            content,
            fmt,
            tools,
            self._workflow_defs(),
            field="content",
        )

    async def check_and_draw(
        self, content: str, fmt: DocumentFormat | None = None
    ) -> tuple[Violations, dict[str, builtins.list[dict[str, Any]]]]:
        """:meth:`check`, and each workflow of ``content`` as drawn (none when it does not load)."""
        return await self.workers.run(
            check_and_draw_workflow,
            content,
            fmt,
            self._tools(),
            self._workflow_defs(),
            field="content",
        )

    def file_of(self, workflow_id: str) -> str | None:
        """The name of the file that defines ``workflow_id`` (None: no file does)."""
        doc = self._index.get(workflow_id)
        return doc.name if doc is not None else None

    def remove_file(self, name: str) -> bool:
        """Delete the document file ``name`` of this directory (true when it existed)."""
        if not FILE_NAME.match(name):
            raise InvalidInputError(
                f"'{name}' is not a document file name",
                violations=[
                    {
                        "path": "file",
                        "rule": "file_name",
                        "message": "expected <name>.yaml|yml|json|xml",
                    }
                ],
            )
        with self._lock:
            path = self.directory / name
            existed = path.is_file()
            if existed:
                remove_atomic(path)
            self.reload()
        return existed

    async def check_errors(self, content: str, fmt: DocumentFormat | None, what: str) -> None:
        """Raise :class:`WorkflowInvalidError` when :meth:`check` finds errors in ``content``."""
        violations = await self.check(content, fmt)
        errors = errors_only(violations)
        if errors:
            raise WorkflowInvalidError(
                f"the {what} has {len(errors)} error(s)", violations=violations
            )

    async def save_checked(
        self,
        target: str | None,
        content: str,
        fmt: DocumentFormat | None = None,
        *,
        expected_version: str | None = None,
        overwrite: bool = False,
    ) -> SavedDocument:
        """:meth:`save`, the content checked in a document worker first, then in a thread."""
        if fmt is None:
            by_name = SUFFIXES.get(Path(target).suffix) if target else None
            fmt = by_name or detect_format("", content)
        try:
            await self.check_errors(content, fmt, "document")
        except WorkflowInvalidError as exc:
            raise await asyncio.to_thread(self.located, exc, target, content, fmt) from None
        return await asyncio.to_thread(
            self.save, target, content, fmt, expected_version=expected_version, overwrite=overwrite
        )

    def located(
        self, exc: WorkflowInvalidError, target: str | None, content: str, fmt: DocumentFormat
    ) -> WorkflowInvalidError:
        """``exc`` with the workflow id, file name and file ``path`` of the save in its context."""
        workflow_id, name = target_file(target, content, fmt, self.file_of)
        where: dict[str, Any] = {"workflow_id": workflow_id} if workflow_id else {}
        if name is not None:
            where |= {"file": name, "path": str(self.directory / name)}
        exc.context = {**where, **exc.context}
        return exc

    def step_order(self, workflow_id: str) -> StepOrder:
        """The nodes in the order the interpreter takes them, with how each gets to run."""
        return StepOrder(workflow_id=workflow_id, steps=step_order(self.workflow(workflow_id)))

    def preview_inputs(self, workflow_id: str) -> InputsPreview:
        """The parameters (type, required, default, example, description) and their schema."""
        return InputsPreview.model_validate(
            {"workflow_id": workflow_id, **preview_inputs(self.workflow(workflow_id))}
        )

    def prepare_run(self, workflow_id: str, params: dict[str, Any]) -> PreparedRun:
        """Check params and the document for a run.

        The document given to the launcher includes the sub-workflows it calls from other files.
        """
        doc = self._doc(workflow_id)
        assert doc.loaded is not None
        document = doc.loaded.document
        values = check_values(document.workflows[workflow_id].params, params)
        if doc.errors:
            # Only what stops this workflow: its own errors, those of the sub-workflows it
            # reaches and the document's; a sibling's errors leave it runnable.
            blocking = (
                blocking_errors(doc.report.errors, document, workflow_id)
                if doc.report is not None
                else None
            )
            if blocking is None or blocking:
                shown = doc.violations if blocking is None else [v.to_dict() for v in blocking]
                raise WorkflowInvalidError(
                    f"workflow '{workflow_id}' cannot run: {doc.name} has "
                    f"{len(blocking if blocking is not None else doc.errors)} error(s) in it or "
                    "in what it calls",
                    violations=shown,
                    context={"workflow_id": workflow_id, "file": doc.name, "path": str(doc.path)},
                )
        extra: dict[str, Workflow] = {}
        pending = [w for wf in document.workflows.values() for w in workflow_calls(wf)]
        while pending:
            called = pending.pop()
            if called in document.workflows or called in extra or called not in self._index:
                continue
            extra[called] = self.workflow(called)
            pending.extend(workflow_calls(extra[called]))
        if extra:
            document = document.model_copy(update={"workflows": {**document.workflows, **extra}})
        report = doc.report or validate_document(doc.loaded, known_workflows=set(self._index))
        plan = compile_plan(document, workflow_id, report=report)
        return PreparedRun(plan, values, doc.version)

    # --- writing ---------------------------------------------------------------------------
    def save(
        self,
        target: str | None,
        content: str,
        fmt: DocumentFormat | None = None,
        *,
        expected_version: str | None = None,
        overwrite: bool = False,
    ) -> SavedDocument:
        """Validate and write a document.

        ``target`` is a workflow id (the file holding it, or ``<id>.<ext>``), a file name, or
        None (``<first workflow id>.<ext>``). Errors raise :class:`WorkflowInvalidError` and
        nothing is written; a stale ``expected_version``, an existing file without a version
        or ``overwrite``, or a workflow id defined in another file raise :class:`ConflictError`.
        """
        if fmt is None:
            by_name = SUFFIXES.get(Path(target).suffix) if target else None
            fmt = by_name or detect_format("", content)
        with self._lock:
            try:
                loaded = parse_document(content, fmt=fmt)
                path, required = self._target(target, fmt, loaded.document)
                if required is not None and required not in loaded.document.workflows:
                    raise WorkflowInvalidError(
                        f"the document does not define workflow '{required}'",
                        violations=[
                            violation("workflows", "missing_workflow", f"'{required}' is missing")
                        ],
                    )
                for workflow_id in loaded.document.workflows:
                    owner = self._index.get(workflow_id)
                    if owner is not None and owner.path != path:
                        raise ConflictError(
                            f"workflow '{workflow_id}' is already defined in {owner.name}",
                            kind=ConflictKind.EXISTS,
                            context={"workflow_id": workflow_id, "file": owner.name},
                        )
                violations = self.validate(content, fmt)
                errors = errors_only(violations)
                if errors:
                    raise WorkflowInvalidError(
                        f"the document has {len(errors)} error(s)", violations=violations
                    )
                check_version(path, expected_version, overwrite)
                write_atomic(path, content)
                self.reload()
            except WorkflowInvalidError as exc:
                raise self.located(exc, target, content, fmt) from None
        return SavedDocument(
            file=path.name,
            format=fmt,
            version=content_version(content),
            workflows=builtins.list(loaded.document.workflows),
            violations=[Problem.model_validate(v) for v in violations],
        )

    def _target(
        self, target: str | None, fmt: DocumentFormat, document: WorkflowDocument
    ) -> tuple[Path, str | None]:
        if target is None:
            return self.directory / (next(iter(document.workflows)) + EXTENSIONS[fmt]), None
        if FILE_NAME.match(target):
            if SUFFIXES[Path(target).suffix] != fmt:
                raise InvalidInputError(
                    f"{target} is not a {fmt} file name",
                    violations=[
                        {"path": "format", "rule": "format", "message": f"{target} needs its own"}
                    ],
                )
            return self.directory / target, None
        if re.match(IDENTIFIER, target):
            owner = self._index.get(target)
            if owner is not None and owner.format != fmt:
                raise InvalidInputError(
                    f"workflow '{target}' is kept in {owner.name}; send {owner.format}",
                    violations=[
                        {"path": "format", "rule": "format", "message": f"expected {owner.format}"}
                    ],
                )
            return (owner.path if owner else self.directory / (target + EXTENSIONS[fmt])), target
        raise InvalidInputError(
            f"'{target}' is neither a workflow id nor a file name",
            violations=[
                {
                    "path": "file",
                    "rule": "file_name",
                    "message": "expected <name>.yaml|yml|json|xml",
                }
            ],
        )

    def rename(
        self, workflow_id: str, new_id: str, *, expected_version: str | None = None
    ) -> Renamed:
        """Rename a workflow and the sub-workflow calls to it (in every file)."""
        with self._lock:
            doc = self._doc(workflow_id)
            if not re.match(IDENTIFIER, new_id):
                raise InvalidInputError(
                    f"'{new_id}' is not a valid workflow id",
                    violations=[
                        {"path": "new_id", "rule": "pattern", "message": f"must match {IDENTIFIER}"}
                    ],
                    context={"workflow_id": workflow_id, "new_id": new_id},
                )
            if new_id in self._index:
                owner = self._index[new_id].name
                raise ConflictError(
                    f"workflow '{new_id}' already exists in {owner}",
                    kind=ConflictKind.EXISTS,
                    context={"workflow_id": new_id, "file": owner},
                )
            if expected_version is not None:
                check_version(doc.path, expected_version, True)
            renaming = (workflow_id, new_id)
            edits = [
                (other, rewrite_document(other.loaded, other.text, other.name, rename=renaming))
                for other in self._files.values()
                if other is doc or any(workflow_id in workflow_calls(w) for w in other.workflows)
            ]
            for other, text in edits:
                write_atomic(other.path, text)
            self.reload()
            renamed = self._doc(new_id)
        return Renamed(
            id=new_id,
            previous_id=workflow_id,
            file=renamed.name,
            version=renamed.version,
            updated_files=[other.name for other, _ in edits],
        )

    def delete(self, workflow_id: str, *, expected_version: str | None = None) -> Deleted:
        """Remove a workflow (its file when it held only this one); refused while it is called."""
        with self._lock:
            doc = self._doc(workflow_id)
            users = sorted(
                wid
                for wid, owner in self._index.items()
                if wid != workflow_id and owner.loaded
                if workflow_id in workflow_calls(owner.loaded.document.workflows[wid])
            )
            if users:
                raise ConflictError(
                    f"workflow '{workflow_id}' is called by {', '.join(users)}",
                    kind=ConflictKind.IN_USE,
                    context={"workflow_id": workflow_id, "used_by": users},
                )
            if expected_version is not None:
                check_version(doc.path, expected_version, True)
            alone = len(doc.workflows) == 1
            if alone:
                remove_atomic(doc.path)
            else:
                text = rewrite_document(doc.loaded, doc.text, doc.name, remove=workflow_id)
                write_atomic(doc.path, text)
            self.reload()
        return Deleted(id=workflow_id, file=doc.name, file_removed=alone)


# --- helpers --------------------------------------------------------------------------------
def check_workflow(
    content: str,
    fmt: DocumentFormat | None,
    known_tools: Collection[str] | Mapping[str, Any],
    known_workflows: Mapping[str, Workflow],
) -> Violations:
    """Every violation of ``content`` (a document worker's task: plain data in and out)."""
    try:
        loaded = parse_document(content, fmt=fmt)
    except WorkflowInvalidError as exc:
        return exc.violations
    report = validate_document(loaded, known_tools=known_tools, known_workflows=known_workflows)
    return [v.to_dict() for v in report.violations]


def check_and_draw_workflow(
    content: str,
    fmt: DocumentFormat | None,
    known_tools: Collection[str] | Mapping[str, Any],
    known_workflows: Mapping[str, Workflow],
) -> tuple[Violations, dict[str, list[dict[str, Any]]]]:
    """:func:`check_workflow`, and each workflow's graph as drawn (a document worker's task)."""
    try:
        loaded = parse_document(content, fmt=fmt)
    except WorkflowInvalidError as exc:
        return exc.violations, {}
    report = validate_document(loaded, known_tools=known_tools, known_workflows=known_workflows)
    drawn = {wid: drawn_graph(w) for wid, w in loaded.document.workflows.items()}
    return [v.to_dict() for v in report.violations], drawn


def _scoped(violations: Violations, workflow_id: str) -> Violations:
    prefix = f"workflows.{workflow_id}"
    return [
        v
        for v in violations
        if not str(v.get("path", "")).startswith("workflows.")
        or v["path"] == prefix
        or str(v["path"]).startswith(prefix + ".")
    ]
