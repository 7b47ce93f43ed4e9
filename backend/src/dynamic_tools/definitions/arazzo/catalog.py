"""Importing an Arazzo document as a catalog: its tools, and its workflows as a document of ours.

The catalog service calls :func:`analyse_arazzo` for a preview and an import alike: the
document is checked (schema and rules), its OpenAPI sources read through the catalog fetcher,
then converted (:mod:`~dynamic_tools.definitions.arazzo.convert`, in a document worker) and the
workflow document checked by the workflow validator with the new tools known. Every problem
carries its path and, for the Arazzo document, its line. Nothing is written here.

An import then writes the catalog (its tools) and saves the workflow document
(``<catalog>.arazzo.yaml`` in the workflows folder) through a :class:`WorkflowStore`; when
the save is refused the catalog is put back as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from dynamic_tools.definitions.arazzo.convert import ArazzoConversion, ArazzoSource, convert_arazzo
from dynamic_tools.definitions.arazzo.sources import read_documents, read_sources, source_location
from dynamic_tools.definitions.arazzo.validation import ArazzoCheck, check_arazzo
from dynamic_tools.engine.loaders import line_of
from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.tools.documents import DocumentSource, FetchedDocument
from dynamic_tools.violations import is_error

WORKFLOW_FILE_SUFFIX = ".arazzo.yaml"


class WorkflowStore(Protocol):
    """Where an imported Arazzo document's workflows are checked and saved (the registry's)."""

    async def check(
        self,
        content: str,
        fmt: Any = None,
        *,
        extra_tools: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Every violation of ``content``, ``extra_tools`` (name → input schema) known too."""
        ...

    async def save_checked(
        self,
        target: str | None,
        content: str,
        fmt: Any = None,
        *,
        expected_version: str | None = None,
        overwrite: bool = False,
    ) -> Any:
        """Validate and write a document (raises the project's errors)."""
        ...

    def remove_file(self, name: str) -> bool:
        """Delete one document file (true when it existed)."""
        ...

    def file_of(self, workflow_id: str) -> str | None:
        """The file that defines ``workflow_id`` (None: no file does)."""
        ...


def workflow_clashes(
    store: WorkflowStore | None, catalog: str, workflow_ids: list[str]
) -> list[dict[str, str]]:
    """The workflows an import would define that another file defines already."""
    if store is None:
        return []
    own = workflow_file(catalog)
    clashes = []
    for workflow_id in workflow_ids:
        found = store.file_of(workflow_id)
        if found is not None and found != own:
            clashes.append({"workflow": workflow_id, "existing": f"workflows/{found}"})
    return clashes


@dataclass
class ArazzoAnalysis:
    """What an Arazzo document gives: its check, its conversion and every problem found."""

    check: ArazzoCheck
    conversion: ArazzoConversion | None = None
    content: str | None = None
    violations: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """True when the document can be imported."""
        return not self.violations and self.content is not None


def workflow_file(catalog: str) -> str:
    """The file the catalog's workflows are saved in."""
    return f"{catalog}{WORKFLOW_FILE_SUFFIX}"


async def analyse_arazzo(
    fetched: FetchedDocument,
    raw: dict[str, Any],
    fetcher: DocumentSource,
    *,
    catalog: str,
    run: Any,
    store: WorkflowStore | None,
    lenient: bool = False,
    base_url: str | None = None,
    base_urls: Mapping[str, str] | None = None,
    source_locations: Mapping[str, str] | None = None,
) -> ArazzoAnalysis:
    """Check and convert an Arazzo document; ``run`` runs a task in a document worker.

    ``source_locations`` reads a source description from another path or URL (by name).
    """
    text = fetched.content.decode("utf-8", errors="replace")
    sources, unread = await read_sources(raw, fetched, fetcher, source_locations)
    documents, unread_documents = await read_documents(raw, fetched, fetcher)
    check = check_arazzo(text, name=fetched.location, sources=sources, unread=unread)
    analysis = ArazzoAnalysis(
        check=check, violations=list(check.violations), warnings=list(check.warnings)
    )
    if lenient:  # the shortcuts lenient mode reads are warnings, not errors
        kept = [v for v in analysis.violations if not _lenient_accepts(v)]
        analysis.warnings += [
            {**v, "severity": "warning"} for v in analysis.violations if v not in kept
        ]
        analysis.violations = kept
    if analysis.violations:
        return analysis
    for name, why in {**unread, **unread_documents}.items():
        analysis.violations.append(
            {"path": f"sourceDescriptions.{name}", "rule": "source_not_read", "message": why}
        )
    if analysis.violations:
        return analysis
    moved = source_locations or {}
    urls = {
        str(s.get("name")): source_location(
            moved.get(str(s.get("name")), str(s.get("url", ""))), fetched
        )
        for s in raw.get("sourceDescriptions") or []
        if isinstance(s, dict)
    }
    conversion: ArazzoConversion = await run(
        convert_arazzo_task,
        raw,
        sources,
        catalog,
        dict(base_urls or {}),
        urls,
        lenient,
        documents,
        base_url,
    )
    analysis.conversion = conversion
    for problem in conversion.problems:
        item = {
            "path": ".".join(str(p) for p in problem.path) or "(document)",
            "rule": problem.rule,
            "message": problem.message,
            "line": line_of(check.lines, problem.path),
        }
        if problem.severity == "error":
            analysis.violations.append(item)
        else:
            analysis.warnings.append({**item, "severity": "warning"})
    if analysis.violations:
        return analysis
    content = yaml.safe_dump(conversion.document, sort_keys=False, allow_unicode=True)
    if store is not None:
        schemas = {tool.name: tool.input_schema() for tool in conversion.tools}
        for violation in await store.check(content, "yaml", extra_tools=schemas):
            item = {**violation, "path": f"(workflow document) {violation.get('path', '')}"}
            if is_error(violation):
                analysis.violations.append(item)
            else:
                analysis.warnings.append(item)
    analysis.content = content
    return analysis


def convert_arazzo_task(
    raw: dict[str, Any],
    sources: dict[str, Any],
    catalog: str,
    base_urls: dict[str, str],
    source_urls: dict[str, str],
    lenient: bool,
    documents: dict[str, ArazzoSource] | None = None,
    base_url: str | None = None,
) -> ArazzoConversion:
    """:func:`convert_arazzo` as a document worker's task (plain data in, plain data out)."""
    return convert_arazzo(
        raw,
        sources,
        catalog=catalog,
        base_urls=base_urls,
        source_urls=source_urls,
        lenient=lenient,
        documents=documents,
        base_url=base_url,
    )


def _lenient_accepts(violation: dict[str, Any]) -> bool:
    """Whether lenient mode reads what ``violation`` refuses (a runner's shortcut).

    ``source#/paths/...`` operation paths, names outside the spec's patterns (``Search
    ArticlesResponse`` as an output name), and outputs given as literal values instead of
    expressions (the value is the output).
    """
    rule, path = violation.get("rule"), str(violation.get("path", ""))
    if rule in ("operation_path", "name_pattern"):
        return True
    return (
        rule == "schema"
        and ".outputs." in f".{path}"
        and "is not of type 'string'" in str(violation.get("message", ""))
    )


def describe_error(exc: DynamicToolsError) -> dict[str, Any]:
    """A refused save as one problem of the import."""
    return {"path": "(workflow document)", "rule": exc.code, "message": exc.message}


__all__ = [
    "WORKFLOW_FILE_SUFFIX",
    "ArazzoAnalysis",
    "WorkflowStore",
    "analyse_arazzo",
    "convert_arazzo_task",
    "describe_error",
    "workflow_clashes",
    "workflow_file",
]
