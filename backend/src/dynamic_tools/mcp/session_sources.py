"""Documents a session brings by header: its OpenAPI API, its workflows, its workflow guides.

- ``X-Target-URL`` → an OpenAPI 2.0/3.x document → the session's API tools (auth from
  ``X-Target-Headers`` at call time, never from the document);
- ``X-Workflow-URL`` → a workflow document → the session's ``w_*`` tools (and resources);
- ``X-Workflow-Resources`` → a workflow document → resources only
  (docs/design-sources.md#tool-discovery-design).

Documents are fetched with :class:`DocumentFetcher` (allowed hosts only; ``file://`` inside the
registry directory). A document is checked again when it is asked for ``refetch_s`` (a second)
or more after its last check: a URL with a conditional request (``If-None-Match`` /
``If-Modified-Since`` from its ``ETag`` / ``Last-Modified``; a ``304`` keeps the copy), a file by
reading it. What is derived from a document is cached by the hash of its content, so an
unchanged document is converted once and an edited one is seen on the next check. A GraphQL
endpoint's introspection answer is asked again after ``introspect_s`` (a minute). Parsing and
conversion run in the document workers (time and memory budget, off the event loop).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.document_workers import DocumentWorkers
from dynamic_tools.engine.loaders import (
    LoadedDocument,
    detect_format,
    load_document,
    parse_raw,
)
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import reachable_workflows
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import DynamicToolsError, InvalidInputError, WorkflowInvalidError
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.http.request_builder import PreparedRequest
from dynamic_tools.http.sender import HttpSender
from dynamic_tools.tools.catalogs import convert_fetched
from dynamic_tools.tools.documents import FetchedDocument
from dynamic_tools.tools.graphql.endpoint import endpoint_parts
from dynamic_tools.tools.models import AuthSpec, ToolConfig
from dynamic_tools.tools.openapi import ConversionOptions

MAX_CACHED = 32
DOCUMENT = "(document)"
"""The ``workflow`` of a problem that is the document's own (not one of its workflows)."""


@dataclass(frozen=True)
class SessionApi:
    """The API tools of one OpenAPI document, or of one GraphQL schema (``schema_sdl``)."""

    title: str | None
    tools: dict[str, ToolConfig]
    content_hash: str
    warnings: int
    schema_sdl: str | None = None


@dataclass(frozen=True)
class SessionWorkflows:
    """What one header's document gave: its valid workflows, and every problem.

    ``problems`` holds one entry per workflow left out (``{workflow, violations}``): nothing is
    dropped silently. ``guide`` is the text of a natural-language guide (markdown), which
    ``X-Workflow-Resources`` may give instead of a workflow document.
    """

    document: WorkflowDocument | None
    content_hash: str
    valid: list[str]
    problems: list[dict[str, Any]] = field(default_factory=list)
    guide: str | None = None


class _Lru(OrderedDict[str, Any]):
    def remember(self, key: str, value: Any) -> Any:
        self[key] = value
        self.move_to_end(key)
        while len(self) > MAX_CACHED:
            self.popitem(last=False)
        return value


class SessionSources:
    """Fetches and converts header-named documents, checked again briefly, cached by content."""

    def __init__(
        self,
        fetcher: DocumentFetcher,
        *,
        refetch_s: float = 1.0,
        introspect_s: float = 60.0,
        workers: DocumentWorkers | None = None,
        sender: HttpSender | None = None,
    ) -> None:
        self.fetcher = fetcher
        self.sender = sender
        self.refetch_s = refetch_s
        self.introspect_s = introspect_s
        self.workers = workers or DocumentWorkers(workers=0)
        self._fetched: _Lru = _Lru()  # url → (time, FetchedDocument)
        self._derived: _Lru = _Lru()  # kind:hash → derived value

    async def _fetch(self, url: str, header: str) -> tuple[FetchedDocument, str]:
        cached = self._fetched.get(url)
        if cached is not None and time.monotonic() - cached[0] < self.refetch_s:
            return cached[1], cached[2]
        previous = cached[1] if cached is not None else None
        try:
            document = await self.fetcher.fetch(url, previous=previous)
        except InvalidInputError as exc:
            exc.violations = [{**v, "path": f"header:{header}"} for v in exc.violations]
            raise
        if document is previous and cached is not None:  # 304 Not Modified
            digest: str = cached[2]
        else:
            digest = hashlib.sha256(document.content).hexdigest()
        self._fetched.remember(url, (time.monotonic(), document, digest))
        return document, digest

    async def digest(self, url: str, header: str) -> str:
        """The content hash of the document at ``url`` (checked again as :meth:`_fetch` says)."""
        _, digest = await self._fetch(url, header)
        return digest

    async def introspection_digest(self, endpoint: str, headers: dict[str, str]) -> str:
        """The hash of the endpoint's introspection answer (asked again after ``introspect_s``)."""
        _, digest = await self._introspect(endpoint, headers)
        return digest

    async def api(self, url: str) -> SessionApi:
        """The tools of the OpenAPI document at ``url`` (``X-Target-URL``)."""
        fetched, digest = await self._fetch(url, "x-target-url")
        key = f"api:{digest}:{fetched.document_url}"
        if key in self._derived:
            cached: SessionApi = self._derived[key]
            return cached
        options = ConversionOptions(document_url=fetched.document_url)
        try:
            result = await self.workers.run_large(
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

    async def graphql(
        self, endpoint: str, headers: dict[str, str], schema_url: str | None
    ) -> SessionApi:
        """The tools of the GraphQL API at ``endpoint`` (its query string kept for every call).

        Its schema is read from ``schema_url`` (SDL) or by introspection (sent with the
        session's ``headers``), cached briefly.

        Raises:
            InvalidInputError: the endpoint URL's query string cannot be kept (a parameter
                named twice, or one that looks like a credential), or the schema cannot be read
                (too large, nested too deep, not a schema).
        """
        endpoint_parts(endpoint, where="header:x-target-url")
        if schema_url is not None:
            fetched, digest = await self._fetch(schema_url, "x-schema-url")
            source: Any = fetched.content.decode("utf-8", errors="replace")
            field, kind = "header:x-schema-url", "sdl"
        else:
            source, digest = await self._introspect(endpoint, headers)
            field, kind = "header:x-target-url", "introspection"
        key = f"gql:{digest}:{endpoint}"
        if key in self._derived:
            cached: SessionApi = self._derived[key]
            return cached
        try:
            tools, sdl = await self.workers.run(graphql_tools, source, kind, endpoint, field=field)
        except InvalidInputError as exc:
            exc.violations = [{**v, "path": field} for v in exc.violations]
            raise
        found = SessionApi(None, {t.name: t for t in tools}, digest, 0, sdl)
        return self._derived.remember(key, found)  # type: ignore[no-any-return]

    async def _introspect(self, endpoint: str, headers: dict[str, str]) -> tuple[Any, str]:
        """The endpoint's introspection answer and its hash, asked again after ``introspect_s``.

        The answer is JSON as the sender parsed it, or the text it kept (not JSON, or nested
        past the sender's depth: :func:`graphql_tools` reads it again to say which). An answer
        cut at the sender's size cap is refused here, naming the limit.
        """
        who = hashlib.sha256(json.dumps(headers, sort_keys=True).encode()).hexdigest()
        key = f"introspection:{endpoint}:{who}"
        cached = self._fetched.get(key)
        if cached is not None and time.monotonic() - cached[0] < self.introspect_s:
            return cached[1], cached[2]
        if self.sender is None:
            raise InvalidInputError(
                "this server cannot introspect GraphQL endpoints; give X-Schema-URL",
                violations=[{"path": "header:x-target-url", "rule": "graphql", "message": ""}],
            )
        target = endpoint_parts(endpoint, where="header:x-target-url")
        from dynamic_tools.tools.graphql.schema import INTROSPECTION_QUERY  # loads graphql-core

        request = PreparedRequest(
            tool="graphql_introspection",
            method="POST",
            url=target.base_url + target.path,
            query=list(target.query.items()),  # apart, so the sender merges it (never drops)
            body={"query": INTROSPECTION_QUERY},
        )
        try:
            result = await self.sender.send(request, extra_headers=headers or None)
        except DynamicToolsError as exc:
            raise InvalidInputError(
                f"the GraphQL endpoint at X-Target-URL could not be introspected: {exc.message}",
                violations=[
                    {"path": "header:x-target-url", "rule": "introspection", "message": exc.message}
                ],
            ) from None
        if result.status_code >= 400:
            message = f"the endpoint answered HTTP {result.status_code} to introspection"
            raise InvalidInputError(
                f"the GraphQL schema could not be read: {message}",
                violations=[
                    {"path": "header:x-target-url", "rule": "introspection", "message": message}
                ],
            )
        if result.truncated:
            limit = _size(self.sender.max_response_bytes)
            message = (
                f"the introspection answer is larger than the {limit} response limit "
                "(HTTP_MAX_RESPONSE_BYTES); give the schema as SDL with X-Schema-URL, or raise "
                "the limit"
            )
            raise InvalidInputError(
                f"the GraphQL schema could not be read: {message}",
                violations=[
                    {"path": "header:x-target-url", "rule": "max_size", "message": message}
                ],
            )
        digest = hashlib.sha256(json.dumps(result.body, sort_keys=True).encode()).hexdigest()
        self._fetched.remember(key, (time.monotonic(), result.body, digest))
        return result.body, digest

    async def workflows(
        self, url: str, header: str, *, known_tools: Mapping[str, Any] | None
    ) -> SessionWorkflows:
        """The workflows of the document at ``url``; every violation named when it is invalid.

        ``known_tools`` maps what the session may call to its input schema (None: no check).
        """
        fetched, digest = await self._fetch(url, header)
        tools_hash = hashlib.sha256(
            json.dumps(known_tools, sort_keys=True, default=str).encode()
        ).hexdigest()
        key = f"wf:{digest}:{tools_hash}"
        if key in self._derived:
            cached: SessionWorkflows = self._derived[key]
            return cached
        try:
            found: SessionWorkflows = await self.workers.run(
                load_session_workflows,
                fetched,
                None if known_tools is None else dict(known_tools),
                digest,
                header == "x-workflow-resources",
                field=f"header:{header}",
            )
        except WorkflowInvalidError as exc:
            exc.context = {**exc.context, "header": header, "source": fetched.source}
            raise
        return self._derived.remember(key, found)  # type: ignore[no-any-return]


def graphql_tools(source: Any, kind: str, endpoint: str) -> tuple[list[ToolConfig], str]:
    """The root-field tools and the SDL of a schema (a document worker's task).

    ``source`` is SDL text (``kind`` ``sdl``) or an introspection answer (``introspection``):
    parsed JSON, or the text the sender kept, which is read again here so that an answer
    nested too deep is refused as such (never read as SDL).
    """
    from dynamic_tools.tools.graphql.fields import root_field_tools
    from dynamic_tools.tools.graphql.schema import (
        introspection_answer,
        schema_from_introspection,
        schema_from_sdl,
        schema_sdl,
    )

    if kind == "sdl":
        schema = schema_from_sdl(source)
    else:
        answer = introspection_answer(source) if isinstance(source, str) else source
        schema = schema_from_introspection(answer)
    return root_field_tools(schema, endpoint), schema_sdl(schema)


def _size(limit: int) -> str:
    """``5000000`` → ``5 MB``; ``20000`` → ``20 kB``; ``1500`` → ``1500 bytes``."""
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if limit >= scale and limit % (scale // 10) == 0:
            return f"{limit / scale:g} {unit}"
    return f"{limit} bytes"


def load_session_workflows(
    fetched: FetchedDocument, known_tools: dict[str, Any] | None, digest: str, guide_ok: bool
) -> SessionWorkflows:
    """The document's valid workflows and a problem per one left out (a document worker's task).

    A workflow that does not fit the format, or does not validate, is left out and reported,
    and so is every workflow that calls one left out; the others are served, and the document
    returned holds only them (a run compiles what is served, never a sibling left out). An
    error of the document itself (not of one workflow) leaves every workflow out. Text that is
    not a workflow document at all is a guide when ``guide_ok`` (``X-Workflow-Resources``),
    else :class:`WorkflowInvalidError`.
    """
    text = fetched.content.decode("utf-8", errors="replace")
    name = fetched.location.rsplit("/", 1)[-1]
    if guide_ok and not looks_like_workflow_document(text, name):
        return SessionWorkflows(None, digest, [], guide=text)
    try:
        loaded = load_document(text, name=name)
        problems: dict[str, list[dict[str, Any]]] = {}
    except WorkflowInvalidError as exc:
        loaded, problems = _without_broken_workflows(text, name, exc)
    report = validate_document(loaded, known_tools=known_tools)
    for violation in report.errors:
        problems.setdefault(_workflow_of(violation.path), []).append(violation.to_dict())
    document = loaded.document
    _leave_out_callers(document, problems)
    valid = [] if DOCUMENT in problems else [w for w in document.workflows if w not in problems]
    listed = [{"workflow": w, "violations": v} for w, v in problems.items()]
    if not valid:
        return SessionWorkflows(None, digest, [], listed)
    served = {w: document.workflows[w] for w in valid}  # a run compiles only what is served
    document = document.model_copy(update={"workflows": served})
    return SessionWorkflows(document, digest, valid, listed)


def _leave_out_callers(
    document: WorkflowDocument, problems: dict[str, list[dict[str, Any]]]
) -> None:
    """Add a problem for every workflow that calls one left out, directly or not.

    Only those workflows go: the others of the document do not depend on the ones left out.
    A workflow the document does not define is already reported by the validator
    (``unknown_workflow``) at the call.
    """
    for workflow_id in document.workflows:
        if workflow_id in problems:
            continue
        reached = reachable_workflows(document, workflow_id)[1:]
        left_out = [w for w in reached if w in problems]
        if left_out:
            problems[workflow_id] = [
                {
                    "path": f"workflows.{workflow_id}",
                    "rule": "sub_workflow_left_out",
                    "message": f"calls {', '.join(repr(w) for w in left_out)}, which "
                    f"{'is' if len(left_out) == 1 else 'are'} left out (invalid)",
                    "severity": "error",
                }
            ]


def looks_like_workflow_document(text: str, name: str) -> bool:
    """XML, or YAML/JSON whose top level is a mapping with ``workflows`` (not prose)."""
    fmt = detect_format(name, text)
    if fmt == "xml":
        return True
    try:
        raw, _ = parse_raw(text, fmt)
    except WorkflowInvalidError:
        return False
    return isinstance(raw, dict) and "workflows" in raw


def _workflow_of(path: str) -> str:
    parts = path.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "workflows" else DOCUMENT


def _without_broken_workflows(
    text: str, name: str, error: WorkflowInvalidError
) -> tuple[LoadedDocument, dict[str, list[dict[str, Any]]]]:
    """The document without the workflows the model refused; their violations by workflow.

    Raises:
        WorkflowInvalidError: the document itself is broken (not only some of its workflows),
            or no workflow is left.
    """
    problems: dict[str, list[dict[str, Any]]] = {}
    for violation in error.violations:
        problems.setdefault(_workflow_of(str(violation.get("path", ""))), []).append(violation)
    fmt = detect_format(name, text)
    raw, lines = parse_raw(text, fmt)
    workflows = raw.get("workflows") if isinstance(raw, dict) else None
    if DOCUMENT in problems or not isinstance(workflows, dict):
        raise error
    kept = {w: v for w, v in workflows.items() if w not in problems}
    if not kept:
        raise error
    document = WorkflowDocument.model_validate({**raw, "workflows": kept})
    return LoadedDocument(document, fmt, raw, lines), problems
