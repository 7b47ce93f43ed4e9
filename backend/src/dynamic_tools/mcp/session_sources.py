"""Documents a session brings by header: its OpenAPI API, its workflows, its workflow guides.

- ``X-Target-URL`` → an OpenAPI 2.0/3.x document → the session's API tools (auth from
  ``X-Target-Headers`` at call time, never from the document);
- ``X-Workflow-URL`` → a workflow document → the session's ``w_*`` tools (and resources);
- ``X-Workflow-Resources`` → a workflow document → resources only (seed 000 strategy 2).

Documents are fetched with :class:`DocumentFetcher` (allowed hosts only; ``file://`` inside the
registry directory). A URL is fetched again after ``refetch_s``; what is derived from a document
is cached by the hash of its content, so unchanged documents are converted once. Parsing and
conversion run in the document workers (time and memory budget, off the event loop).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from dynamic_tools.document_workers import DocumentWorkers
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import InvalidInputError, WorkflowInvalidError
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.tools.catalogs import convert_fetched
from dynamic_tools.tools.documents import FetchedDocument
from dynamic_tools.tools.models import AuthSpec, ToolConfig
from dynamic_tools.tools.openapi import ConversionOptions

MAX_CACHED = 32


@dataclass(frozen=True)
class SessionApi:
    """The API tools of one OpenAPI document."""

    title: str | None
    tools: dict[str, ToolConfig]
    content_hash: str
    warnings: int


@dataclass(frozen=True)
class SessionWorkflows:
    """The valid workflows of one workflow document."""

    document: WorkflowDocument
    content_hash: str
    valid: list[str]


class _Lru(OrderedDict[str, Any]):
    def remember(self, key: str, value: Any) -> Any:
        self[key] = value
        self.move_to_end(key)
        while len(self) > MAX_CACHED:
            self.popitem(last=False)
        return value


class SessionSources:
    """Fetches and converts header-named documents, cached by URL (briefly) and content."""

    def __init__(
        self,
        fetcher: DocumentFetcher,
        *,
        refetch_s: float = 60.0,
        workers: DocumentWorkers | None = None,
    ) -> None:
        self.fetcher = fetcher
        self.refetch_s = refetch_s
        self.workers = workers or DocumentWorkers(workers=0)
        self._fetched: _Lru = _Lru()  # url → (time, FetchedDocument)
        self._derived: _Lru = _Lru()  # kind:hash → derived value

    async def _fetch(self, url: str, header: str) -> tuple[FetchedDocument, str]:
        cached = self._fetched.get(url)
        if cached is not None and time.monotonic() - cached[0] < self.refetch_s:
            document: FetchedDocument = cached[1]
        else:
            try:
                document = await self.fetcher.fetch(url)
            except InvalidInputError as exc:
                exc.violations = [{**v, "path": f"header:{header}"} for v in exc.violations]
                raise
            self._fetched.remember(url, (time.monotonic(), document))
        return document, hashlib.sha256(document.content).hexdigest()

    async def api(self, url: str) -> SessionApi:
        """The tools of the OpenAPI document at ``url`` (``X-Target-URL``)."""
        fetched, digest = await self._fetch(url, "x-target-url")
        key = f"api:{digest}:{fetched.document_url}"
        if key in self._derived:
            cached: SessionApi = self._derived[key]
            return cached
        options = ConversionOptions(document_url=fetched.document_url)
        try:
            result = await self.workers.run(
                convert_fetched, fetched, options, field="header:x-target-url"
            )
        except InvalidInputError as exc:
            exc.violations = [{**v, "path": "header:x-target-url"} for v in exc.violations]
            raise
        if result.violations:
            raise InvalidInputError(
                f"the OpenAPI document at X-Target-URL cannot be used: "
                f"{result.violations[0].message}",
                violations=[
                    {"path": f"header:x-target-url{v.path}", "rule": v.rule, "message": v.message}
                    for v in result.violations
                ],
                context={"source": fetched.source},
            )
        tools = {t.name: t.model_copy(update={"auth": AuthSpec()}) for t in result.tools}
        api = SessionApi(result.title, tools, digest, len(result.warnings))
        return self._derived.remember(key, api)  # type: ignore[no-any-return]

    async def workflows(
        self, url: str, header: str, *, known_tools: Collection[str] | None
    ) -> SessionWorkflows:
        """The workflows of the document at ``url``; every violation named when it is invalid."""
        fetched, digest = await self._fetch(url, header)
        key = f"wf:{digest}:{hash(frozenset(known_tools or ()))}:{known_tools is None}"
        if key in self._derived:
            cached: SessionWorkflows = self._derived[key]
            return cached
        try:
            document, errors = await self.workers.run(
                load_session_workflows,
                fetched,
                None if known_tools is None else frozenset(known_tools),
                field=f"header:{header}",
            )
        except WorkflowInvalidError as exc:
            exc.context = {**exc.context, "header": header, "source": fetched.source}
            raise
        failing = {str(v["path"]).split(".")[1] for v in errors if str(v["path"]).count(".")}
        valid = [w for w in document.workflows if w not in failing]
        if not valid:
            raise WorkflowInvalidError(
                f"no workflow of the document at {header} validates",
                violations=errors,
                context={"header": header, "source": fetched.source},
            )
        found = SessionWorkflows(document, digest, valid)
        return self._derived.remember(key, found)  # type: ignore[no-any-return]


def load_session_workflows(
    fetched: FetchedDocument, known_tools: frozenset[str] | None
) -> tuple[WorkflowDocument, list[dict[str, Any]]]:
    """The document and its errors (a document worker's task)."""
    text = fetched.content.decode("utf-8", errors="replace")
    loaded = load_document(text, name=fetched.location.rsplit("/", 1)[-1])
    report = validate_document(loaded, known_tools=known_tools)
    return loaded.document, [v.to_dict() for v in report.errors]
