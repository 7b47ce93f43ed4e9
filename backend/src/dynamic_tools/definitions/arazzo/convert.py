"""An Arazzo document (and its OpenAPI sources) → tools and a workflow document of ours.

The operations the steps use become tools through the OpenAPI converter (only those). Each
Arazzo workflow becomes a workflow of one document, step by step:

- a step is a ``call`` node (``operationId`` / ``operationPath``) or a ``workflow`` node
  (``workflowId``), named after the step and writing its output under the same name; its
  parameters and ``requestBody`` (``payload`` with ``replacements``) become ``args``; its
  ``successCriteria`` the node's ``criteria``; its ``outputs`` the node's ``outputs``;
- the next step waits for it (``depends_on``); ``onSuccess`` actions (or the workflow's
  ``successActions``) become a branch after it (``goto`` a step or a workflow, ``end``, the
  next step otherwise);
- ``onFailure`` ``retry`` becomes ``on_error`` (``retryLimit`` retries ``retryAfter`` seconds
  apart, while its criteria hold); ``goto`` and ``end`` a fallback branch, whose default
  fails the run as Arazzo does;
- ``dependsOn`` workflows run first, as sub-workflows; ``components`` are inlined;
- workflow ``inputs`` (a JSON Schema) become params, workflow ``outputs`` the outputs.

A goto back to an earlier step is a loop (a branch case with ``max_loops``, at most
:data:`MAX_LOOPS` rounds, a warning says so). What cannot be carried over is a problem with
its path (never dropped silently): a payload that is not an object of the operation's body
properties, a body that is not JSON, a pointer segment a reference cannot name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.definitions.arazzo.operations import operation_tools
from dynamic_tools.definitions.arazzo.parts import (
    MAX_LOOPS,
    ArazzoConversion,
    Path_,
    Problem,
    as_list,
    as_mapping,
    identifier,
    input_names,
    resolved,
)
from dynamic_tools.definitions.arazzo.workflow_graph import WorkflowConverter


@dataclass
class ArazzoSource:
    """An Arazzo document another one names in ``sourceDescriptions``, read with its sources."""

    raw: dict[str, Any]
    sources: dict[str, Any] = field(default_factory=dict)
    source_urls: dict[str, str] = field(default_factory=dict)
    documents: dict[str, ArazzoSource] = field(default_factory=dict)


MAX_DOCUMENT_DEPTH = 3
"""How deep Arazzo documents may name each other (a workflow of a document's document...)."""


def convert_arazzo(
    raw: dict[str, Any],
    sources: Mapping[str, Any],
    *,
    catalog: str,
    base_urls: Mapping[str, str] | None = None,
    source_urls: Mapping[str, str] | None = None,
    lenient: bool = False,
    documents: Mapping[str, ArazzoSource] | None = None,
    base_url: str | None = None,
    prefix: str | None = None,
) -> ArazzoConversion:
    """Convert a checked Arazzo document whose OpenAPI ``sources`` were read (by name).

    ``base_urls`` gives this document's sources a base URL by name; ``base_url`` every source
    it has none for (the named documents' too). The tools are named ``<prefix>_<operation>``
    (the catalog's name when no ``prefix`` is given), as an OpenAPI catalog's are.

    ``documents`` are the Arazzo documents it names (by source name): when a step calls a
    workflow there (``workflowId: $sourceDescriptions.<name>.<id>``), that document's
    workflows are converted into the same workflow document, as ``<name>_<id>``, with their
    own operations as tools.
    """
    result = ArazzoConversion()
    root = ArazzoSource(dict(raw), dict(sources), dict(source_urls or {}), dict(documents or {}))
    bundle = _Bundle(result, catalog, base_urls or {}, lenient, base_url, prefix)
    bundle.convert(root, ())
    info = as_mapping(raw.get("info"))
    result.document = {
        "domain": identifier(catalog),
        "version": str(info.get("version", "1.0")),
        "description": str(info.get("title") or info.get("summary") or catalog),
        "workflows": bundle.workflows,
    }
    return result


class _Bundle:
    """The documents of one import: each converted once, their workflow ids kept apart."""

    def __init__(
        self,
        result: ArazzoConversion,
        catalog: str,
        base_urls: Mapping[str, str],
        lenient: bool,
        base_url: str | None,
        prefix: str | None = None,
    ) -> None:
        self.base_url = base_url
        self.tool_prefix = prefix or catalog
        self.result = result
        self.catalog = catalog
        self.base_urls = base_urls
        self.lenient = lenient
        self.workflows: dict[str, Any] = {}
        self.ids: dict[tuple[tuple[str, ...], str], tuple[str, list[str]]] = {}
        self.taken: set[str] = set()
        self.done: set[tuple[str, ...]] = set()
        self.root_urls: dict[str, str] = {}  # a root source's URL → the base URL it was given

    def convert(self, document: ArazzoSource, key: tuple[str, ...]) -> None:
        self.done.add(key)
        raw = document.raw
        prefix = "_".join(key)
        tool_prefix = identifier("_".join((self.tool_prefix, *key)))[:32].strip("_")
        operations = operation_tools(
            raw,
            document.sources,
            tool_prefix,
            self.catalog,
            self._base_urls(document, key),
            document.source_urls,
            self.result,
            key,
        )
        components = as_mapping(raw.get("components"))
        for workflow in as_list(raw.get("workflows")):
            if isinstance(workflow, dict):
                arazzo_id = str(workflow.get("workflowId"))
                engine_id = identifier(f"{prefix}_{arazzo_id}" if key else arazzo_id, self.taken)
                inputs = input_names(resolved(workflow.get("inputs"), components))
                self.ids[(key, arazzo_id)] = (engine_id, inputs)
                self.result.workflow_ids[".".join((*key, arazzo_id))] = engine_id
        for index, workflow in enumerate(as_list(raw.get("workflows"))):
            if not isinstance(workflow, dict):
                continue
            here: Path_ = (*_key_path(key), "workflows", index)
            converter = WorkflowConverter(
                raw,
                document.sources,
                workflow,
                here,
                operations,
                self.result,
                self.lenient,
                functools.partial(self.find, document, key),
                secret_prefix=identifier(self.catalog).upper().strip("_") or "ARAZZO",
            )
            engine_id = self.ids[(key, str(workflow.get("workflowId")))][0]
            self.workflows[engine_id] = converter.convert()

    def _base_urls(self, document: ArazzoSource, key: tuple[str, ...]) -> dict[str, str]:
        """The base URL of each source of ``document`` given one.

        ``base_url`` gives every source one; ``base_urls`` names the root document's sources
        (``museum-api``) and a named document's as ``<its source>.<source>``; a named
        document's source read from the same URL as a root source takes that one's.
        """
        found = {n: self.base_url for n in document.sources} if self.base_url else {}
        if not key:
            self.root_urls = {
                url: self.base_urls[name]
                for name, url in document.source_urls.items()
                if name in self.base_urls
            }
            return {**found, **self.base_urls}
        for name in document.sources:
            url = document.source_urls.get(name)
            if url in self.root_urls:
                found[name] = self.root_urls[url]
            dotted = ".".join((*key, name))
            if dotted in self.base_urls:
                found[name] = self.base_urls[dotted]
        return found

    def find(
        self, document: ArazzoSource, key: tuple[str, ...], text: str
    ) -> tuple[str, list[str]] | None:
        """The engine id and input names of the workflow ``text`` names from ``document``."""
        match = re.match(r"^\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.(.+)$", text)
        if not match:
            return self.ids.get((key, text))
        name, workflow_id = match.group(1), match.group(2)
        other = document.documents.get(name)
        if other is None or len(key) >= MAX_DOCUMENT_DEPTH:
            return None
        child = (*key, name)
        if child not in self.done:
            self.convert(other, child)
        found = self.ids.get((child, workflow_id))
        if found is None and workflow_id.startswith("workflows."):  # a shortcut of some runners
            found = self.ids.get((child, workflow_id.removeprefix("workflows.")))
        return found


def _key_path(key: tuple[str, ...]) -> Path_:
    """Where a named document's problems are reported: under the source that names it."""
    return ("sourceDescriptions", *key) if key else ()


__all__ = [
    "MAX_DOCUMENT_DEPTH",
    "MAX_LOOPS",
    "ArazzoConversion",
    "ArazzoSource",
    "Problem",
    "convert_arazzo",
    "identifier",
]
