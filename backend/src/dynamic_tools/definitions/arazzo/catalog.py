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

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from dynamic_tools.definitions.arazzo.convert import ArazzoConversion, ArazzoSource, convert_arazzo
from dynamic_tools.definitions.arazzo.expressions import listing
from dynamic_tools.definitions.arazzo.parts import as_list
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
class WorkflowReport:
    """One Arazzo workflow of an import: its id here, whether it is imported, and why not."""

    workflow_id: str
    id: str | None = None
    imported: bool = False
    problems: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "workflow_id": self.workflow_id,
            "id": self.id,
            "imported": self.imported,
            "problems": self.problems,
        }


@dataclass
class ArazzoAnalysis:
    """What an Arazzo document gives: its check, its conversion and every problem found.

    ``workflows`` reports each workflow of the document: imported, or left out with its
    problems (a workflow not chosen, one that cannot be converted, one that runs a workflow
    left out).
    """

    check: ArazzoCheck
    conversion: ArazzoConversion | None = None
    content: str | None = None
    violations: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    workflows: list[WorkflowReport] = field(default_factory=list)
    lenient_accepts: int = 0
    """How many of the violations lenient mode would read (a runner's shortcut, a warning)."""

    @property
    def valid(self) -> bool:
        """True when the document can be imported."""
        return not self.violations and self.content is not None

    @property
    def left_out(self) -> list[WorkflowReport]:
        """The workflows an import leaves out."""
        return [w for w in self.workflows if not w.imported]


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
    workflows: Sequence[str] | None = None,
    prefix: str | None = None,
) -> ArazzoAnalysis:
    """Check and convert an Arazzo document; ``run`` runs a task in a document worker.

    ``source_locations`` reads a source description from another path or URL (by name).
    ``workflows`` chooses the workflows to import (by Arazzo id); by default every one that
    can be converted is, and the others are reported as left out with their problems.
    ``prefix`` names the tools (``<prefix>_<operation>``; by default the catalog's name). A
    chosen workflow that cannot be converted, or a problem of the whole document (its
    sources, its components), refuses the import.
    """
    text = fetched.content.decode("utf-8", errors="replace")
    sources, unread = await read_sources(raw, fetched, fetcher, source_locations)
    documents, unread_documents = await read_documents(raw, fetched, fetcher)
    check = check_arazzo(text, name=fetched.location, sources=sources, unread=unread)
    analysis = ArazzoAnalysis(check=check, warnings=list(check.warnings))
    found = list(check.violations)
    if lenient:  # the shortcuts lenient mode reads are warnings, not errors
        analysis.warnings += [{**v, "severity": "warning"} for v in found if _lenient_accepts(v)]
        found = [v for v in found if not _lenient_accepts(v)]
    else:
        analysis.lenient_accepts = sum(1 for v in found if _lenient_accepts(v))
    for name, why in {**unread, **unread_documents}.items():
        found.append(
            {"path": f"sourceDescriptions.{name}", "rule": "source_not_read", "message": why}
        )
    ids = [
        str(w.get("workflowId")) if isinstance(w, dict) else str(i)
        for i, w in enumerate(as_list(raw.get("workflows")))
    ]
    plan = _Plan(analysis, ids, _with_what_they_run(raw, workflows))
    plan.sort(found, functools.partial(_index_in, ids=ids))
    if analysis.violations or not isinstance(raw.get("workflows"), list):
        return analysis
    moved = source_locations or {}
    urls = {
        str(s.get("name")): source_location(
            moved.get(str(s.get("name")), str(s.get("url", ""))), fetched
        )
        for s in raw.get("sourceDescriptions") or []
        if isinstance(s, dict)
    }
    for _ in range(len(ids) + 1):  # each round leaves out at least one more workflow
        kept = plan.kept(raw)
        if not kept:
            break
        chosen = {**raw, "workflows": [raw["workflows"][i] for i in kept]}
        conversion: ArazzoConversion = await run(
            convert_arazzo_task,
            chosen,
            sources,
            catalog,
            dict(base_urls or {}),
            urls,
            lenient,
            documents,
            base_url,
            prefix,
        )
        errors: list[dict[str, Any]] = []
        round_warnings: list[dict[str, Any]] = []
        for problem in conversion.problems:
            path = _original_path(problem.path, kept)
            item = {
                "path": ".".join(str(p) for p in path) or "(document)",
                "rule": problem.rule,
                "message": problem.message,
                "line": line_of(check.lines, path),
            }
            if problem.severity == "error":
                errors.append(item)
            else:
                round_warnings.append({**item, "severity": "warning"})
        if plan.sort(errors, functools.partial(_index_in, ids=ids)):
            continue
        if analysis.violations:
            return analysis
        content = yaml.safe_dump(conversion.document, sort_keys=False, allow_unicode=True)
        engine_ids = {v: k for k, v in conversion.workflow_ids.items()}
        checked: list[dict[str, Any]] = []
        checked_warnings: list[dict[str, Any]] = []
        if store is not None:
            schemas = {tool.name: tool.input_schema() for tool in conversion.tools}
            for violation in await store.check(content, "yaml", extra_tools=schemas):
                item = {**violation, "path": f"(workflow document) {violation.get('path', '')}"}
                (checked if is_error(violation) else checked_warnings).append(item)
        if plan.sort(checked, functools.partial(_engine_index, engine_ids=engine_ids, ids=ids)):
            continue
        if analysis.violations:
            return analysis
        analysis.warnings += round_warnings + checked_warnings
        analysis.conversion = conversion
        analysis.content = content
        for report in analysis.workflows:
            report.id = conversion.workflow_ids.get(report.workflow_id)
            report.imported = report.id is not None
        analysis.warnings += [
            {
                "path": f"workflows.{index}",
                "rule": "workflow_left_out",
                "line": line_of(check.lines, ("workflows", index)),
                "message": f"workflow '{w.workflow_id}' is left out: "
                + (w.problems[0]["message"] if w.problems else "not chosen"),
                "severity": "warning",
            }
            for index, w in enumerate(analysis.workflows)
            if not w.imported
        ]
        return analysis
    if not analysis.violations:
        analysis.violations = [p for w in analysis.workflows for p in w.problems] or [
            {"path": "workflows", "rule": "no_workflow", "message": "no workflow can be imported"}
        ]
    return analysis


class _Plan:
    """Which workflows an import takes: the chosen ones, less those with problems."""

    def __init__(
        self, analysis: ArazzoAnalysis, ids: list[str], chosen: Sequence[str] | None
    ) -> None:
        self.analysis = analysis
        self.ids = ids
        self.explicit = chosen is not None
        analysis.workflows = [WorkflowReport(workflow_id) for workflow_id in ids]
        self.out: set[int] = set()
        if chosen is not None:
            unknown = [c for c in chosen if c not in ids]
            for name in unknown:
                analysis.violations.append(
                    {
                        "path": "workflows",
                        "rule": "unknown_workflow",
                        "message": f"no workflow '{name}' in this document"
                        + listing("workflows", ids),
                    }
                )
            for index, workflow_id in enumerate(ids):
                if workflow_id not in chosen:
                    self.out.add(index)
                    analysis.workflows[index].problems.append(
                        {
                            "path": f"workflows.{index}",
                            "rule": "not_chosen",
                            "message": "not among the workflows chosen",
                        }
                    )

    def sort(self, problems: list[dict[str, Any]], index_of: Callable[[str], int | None]) -> bool:
        """File each problem under its workflow (or the document's); true: one more left out."""
        more = False
        for problem in problems:
            index = index_of(str(problem.get("path", "")))
            if index is None:
                self.analysis.violations.append(problem)
                continue
            if self.explicit and index not in self.out:
                self.analysis.violations.append(problem)  # a chosen workflow must import
            self.analysis.workflows[index].problems.append(problem)
            more = more or index not in self.out
            self.out.add(index)
        return more

    def kept(self, raw: dict[str, Any]) -> list[int]:
        """The workflows to convert: not left out, and not running one that is."""
        workflows = as_list(raw.get("workflows"))
        for _ in range(len(workflows)):
            gone = {self.ids[i] for i in self.out}
            newly = {}
            for index, workflow in enumerate(workflows):
                if index in self.out or not isinstance(workflow, dict):
                    continue
                runs = _workflows_run(workflow) & gone
                if runs:
                    newly[index] = sorted(runs)[0]
            if not newly:
                break
            for index, needed in newly.items():
                self.out.add(index)
                problem = {
                    "path": f"workflows.{index}",
                    "rule": "needs_left_out_workflow",
                    "message": f"it runs workflow '{needed}', which is left out",
                }
                self.analysis.workflows[index].problems.append(problem)
                if self.explicit:
                    self.analysis.violations.append(problem)
        return [i for i in range(len(workflows)) if i not in self.out]


def _with_what_they_run(raw: dict[str, Any], chosen: Sequence[str] | None) -> list[str] | None:
    """The chosen workflows and those they run (dependsOn, workflow steps, gotos)."""
    if chosen is None:
        return None
    by_id = {
        str(w.get("workflowId")): w for w in as_list(raw.get("workflows")) if isinstance(w, dict)
    }
    found = list(dict.fromkeys(chosen))
    for workflow_id in found:  # grows as it goes; each id once
        if workflow_id in by_id:
            found += [w for w in sorted(_workflows_run(by_id[workflow_id])) if w not in found]
    return found


def _workflows_run(workflow: dict[str, Any]) -> set[str]:
    """The ids of the workflows ``workflow`` runs (dependsOn, workflow steps, gotos)."""
    found = {str(d) for d in as_list(workflow.get("dependsOn"))}
    actions = [*as_list(workflow.get("successActions")), *as_list(workflow.get("failureActions"))]
    for step in as_list(workflow.get("steps")):
        if isinstance(step, dict):
            if step.get("workflowId") is not None:
                found.add(str(step["workflowId"]))
            actions += [*as_list(step.get("onSuccess")), *as_list(step.get("onFailure"))]
    found |= {str(a["workflowId"]) for a in actions if isinstance(a, dict) and "workflowId" in a}
    return found


def _index_in(path: str, ids: list[str]) -> int | None:
    """The workflow a problem's path is in (``workflows.2.steps…`` → 2); None: the document's."""
    match = re.match(r"^workflows\.(\d+)(?:\.|$)", path)
    return int(match.group(1)) if match and int(match.group(1)) < len(ids) else None


def _engine_index(path: str, engine_ids: Mapping[str, str], ids: list[str]) -> int | None:
    """The Arazzo workflow of a problem the workflow validator found in our document."""
    match = re.match(r"^\(workflow document\) workflows\.([A-Za-z0-9_]+)(?:\.|$)", path)
    arazzo_id = engine_ids.get(match.group(1)) if match else None
    return ids.index(arazzo_id) if arazzo_id in ids else None


def _original_path(path: tuple[str | int, ...], kept: list[int]) -> tuple[str | int, ...]:
    """A problem's path in the converted (filtered) document, as a path of the original."""
    if (
        len(path) >= 2
        and path[0] == "workflows"
        and isinstance(path[1], int)
        and path[1] < len(kept)
    ):
        return ("workflows", kept[path[1]], *path[2:])
    return path


def convert_arazzo_task(
    raw: dict[str, Any],
    sources: dict[str, Any],
    catalog: str,
    base_urls: dict[str, str],
    source_urls: dict[str, str],
    lenient: bool,
    documents: dict[str, ArazzoSource] | None = None,
    base_url: str | None = None,
    prefix: str | None = None,
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
        prefix=prefix,
    )


def _lenient_accepts(violation: dict[str, Any]) -> bool:
    """Whether lenient mode reads what ``violation`` refuses (a runner's shortcut).

    ``source#/paths/...`` operation paths, names outside the spec's patterns (``Search
    ArticlesResponse`` as an output name), and outputs given as literal values instead of
    expressions (the value is the output).
    """
    rule, path = violation.get("rule"), str(violation.get("path", ""))
    if rule in ("operation_path", "name_pattern", "retry_target", "operation_shortcut"):
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
    "WorkflowReport",
    "WorkflowStore",
    "analyse_arazzo",
    "convert_arazzo_task",
    "describe_error",
    "workflow_clashes",
    "workflow_file",
]
