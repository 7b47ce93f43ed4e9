"""OpenAPI catalogs: validate, preview, import, enable/disable, remove, list.

Files, under the registry root's ``catalogs/`` directory:

- ``<name>.yaml`` — the catalog config: ``name``, ``source``, ``source_type``, ``kind``,
  ``openapi_version``, ``title`` (given, or the document's), ``vendor`` (given or null),
  ``prefix``, ``base_url`` (override or null), ``include``
  (operation subset or null), ``enabled``, ``document_hash`` (``sha256:<hex>`` of the document
  bytes), ``created_at``, ``updated_at``, ``manifest``, ``tool_count``.
- ``<name>.tools.json`` — the generated tool manifest: a JSON list of tool configs in the
  tool file format (JSON because a 1,200-tool catalog parses ten times faster than as YAML).

The :class:`~dynamic_tools.tools.registry.ToolRegistry` loads the manifests of *enabled*
catalogs after ``tools/`` (:func:`load_catalog_tools`); a disabled catalog keeps its files but
its tools are not registered. Writes are atomic (manifest first, then the config, which is
what makes a catalog exist); the registry is reloaded after every change.

Errors: :class:`InvalidInputError` for a bad catalog name or ``include``;
:class:`OpenAPIInvalidError` (with ``violations``) for a document that cannot be imported;
:class:`DocumentSourceError` / :class:`TransportError` from the fetcher; :class:`ConflictError`
for an existing catalog without ``overwrite`` or a tool name already registered elsewhere
(both names and places given); :class:`NotFoundError` for an unknown catalog.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import hashlib
import json
import re
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import yaml

from dynamic_tools.atomic_files import remove_atomic, write_atomic
from dynamic_tools.definitions.arazzo.catalog import (
    ArazzoAnalysis,
    WorkflowStore,
    analyse_arazzo,
    describe_error,
    workflow_clashes,
    workflow_file,
)
from dynamic_tools.definitions.arazzo.sources import read_sources
from dynamic_tools.definitions.arazzo.validation import check_arazzo, is_arazzo
from dynamic_tools.document_workers import DocumentWorkers
from dynamic_tools.errors import (
    ConflictError,
    ConflictKind,
    DocumentSourceError,
    DynamicToolsError,
    InvalidInputError,
    NotFoundError,
    OpenAPIInvalidError,
)
from dynamic_tools.safe_parsing import gc_paused
from dynamic_tools.tools.auth_status import SecretLookup, secret_status, secrets_needed
from dynamic_tools.tools.catalog_uploads import (
    UPLOAD_SUFFIX,
    Upload,
    UploadSource,
    check_upload,
    remove_upload,
    store_upload,
)
from dynamic_tools.tools.catalog_views import (
    ArazzoReport,
    Catalog,
    Imported,
    ImportPreview,
    OpenApiCheck,
    Removed,
    Toggled,
)
from dynamic_tools.tools.documents import DocumentSource, FetchedDocument, SourceType
from dynamic_tools.tools.graphql.catalog import convert_graphql, looks_like_graphql
from dynamic_tools.tools.openapi import (
    ConversionOptions,
    ConversionResult,
    Issue,
    convert_document,
    find_provider_contracts,
    parse_document,
)
from dynamic_tools.tools.openapi.catalog_files import (
    CATALOG_NAME,
    CATALOG_PREFIX,
    MANIFEST_SUFFIX,
    load_catalog_tools,
    load_manifest,
    read_config,
)
from dynamic_tools.tools.openapi.preview import command_preview, group_prefixes

if TYPE_CHECKING:
    from dynamic_tools.tools.registry import ToolRegistry

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _names_content(
    method: Callable[Concatenate[CatalogService, str | Upload, _P], Awaitable[_R]],
) -> Callable[Concatenate[CatalogService, str | Upload, _P], Awaitable[_R]]:
    """An uploaded document's problems point at ``content`` (a path's at ``source``)."""

    @functools.wraps(method)
    async def named(
        self: CatalogService, source: str | Upload, /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _R:
        if not isinstance(source, Upload):
            return await method(self, source, *args, **kwargs)
        try:
            result = await method(self, source, *args, **kwargs)
        except InvalidInputError as exc:
            exc.violations = [_at_content(v) for v in exc.violations]
            raise
        if isinstance(result, OpenApiCheck):
            result.violations = [_at_content(v) for v in result.violations]
        return result

    return named


def _at_content(problem: Any) -> Any:
    """``problem`` with the path ``source`` (the document) as ``content``."""
    if isinstance(problem, dict) and problem.get("path") == "source":
        return {**problem, "path": "content"}
    if getattr(problem, "path", None) == "source":
        return problem.model_copy(update={"path": "content"})
    return problem


class CatalogService:
    """Catalog operations over one registry (the API, the MCP tools and the CLI share it).

    Parsing and conversion run in the document workers (a time and memory budget, off the
    event loop; a thread when ``workers`` is None); writes hold a lock so two imports of the
    same catalog cannot interleave.
    """

    def __init__(
        self,
        *,
        catalogs_dir: Path,
        registry: ToolRegistry,
        fetcher: DocumentSource,
        workers: DocumentWorkers | None = None,
        secret: SecretLookup | None = None,
        workflows: WorkflowStore | None = None,
    ) -> None:
        self.catalogs_dir = catalogs_dir
        self.workflows = workflows
        self.registry = registry
        self.fetcher = fetcher
        self.workers = workers or DocumentWorkers(workers=0)
        self.secret: SecretLookup = secret or (lambda _name: None)
        self._lock = threading.Lock()

    async def _fetch_named(
        self, source: str | Upload, source_type: SourceType | None, name: str, prefix: str | None
    ) -> tuple[DocumentSource, FetchedDocument]:
        """The fetcher (see :meth:`_open`) and the document to import as catalog ``name``.

        The name and prefix are checked too.

        Every problem is reported at once: a source that cannot be read together with a bad
        name or prefix (its violations first), so fixing one does not reveal the other.

        Raises:
            DocumentSourceError: the source cannot be read (with the name's violations).
            InvalidInputError: the name or prefix is not one.
        """
        problems = _name_problems(name, prefix)
        try:  # an upload under a name that is not one is read from a neutral directory
            fetcher, fetched = await self._open(source, None if problems else name, source_type)
        except DocumentSourceError as exc:
            exc.violations = [*exc.violations, *problems]
            raise
        if problems:
            fields = " and ".join(f"'{p['path']}'" for p in problems)
            raise InvalidInputError(
                f"{fields} {'is' if len(problems) == 1 else 'are'} invalid: "
                + "; ".join(p["message"] for p in problems),
                violations=problems,
            )
        return fetcher, fetched

    # --- read-only -------------------------------------------------------------------------
    @_names_content
    async def validate_openapi(
        self,
        source: str | Upload,
        *,
        source_type: SourceType | None = None,
        base_url: str | None = None,
    ) -> OpenApiCheck | ArazzoReport:
        """Load and check a document; nothing is written.

        Returns ``{valid, document_kind, openapi_version, title, operation_count,
        tool_count, warnings[], violations[]}``; a document that does not parse is
        ``valid: false`` with the parse error as a violation. An Arazzo document is checked
        as one (:class:`ArazzoReport`), its OpenAPI sources read next to it.

        ``source`` is a path or URL, or an :class:`Upload` (the document's text and the files
        it names), read the same way (see :mod:`~dynamic_tools.tools.catalog_uploads`).
        """
        fetcher, fetched = await self._open(source, None, source_type)
        arazzo = _arazzo_data(fetched)
        if arazzo is not None:
            found, unread = await read_sources(arazzo, fetched, fetcher)
            check = check_arazzo(
                fetched.content.decode("utf-8", "replace"),
                name=fetched.location,
                sources=found,
                unread=unread,
            )
            return ArazzoReport.model_validate(check.to_dict())
        try:
            result = await self.workers.run_large(
                convert_fetched, fetched, ConversionOptions(base_url=base_url), field="source"
            )
        except OpenAPIInvalidError as exc:
            return OpenApiCheck.model_validate(
                {
                    "valid": False,
                    "document_kind": "unknown",
                    "openapi_version": None,
                    "title": None,
                    "operation_count": 0,
                    "tool_count": 0,
                    "warnings": [],
                    "violations": exc.violations,
                }
            )
        return OpenApiCheck.model_validate(
            {
                "valid": result.valid and bool(result.tools),
                "document_kind": result.kind,
                "openapi_version": result.version,
                "title": result.title,
                "operation_count": result.operation_count,
                "tool_count": len(result.tools),
                "warnings": [w.to_dict() for w in result.warnings],
                "violations": [v.to_dict() for v in _all_violations(result)],
            }
        )

    @_names_content
    async def preview_import(
        self,
        source: str | Upload,
        name: str,
        *,
        title: str | None = None,
        vendor: str | None = None,
        prefix: str | None = None,
        include: Sequence[str] | None = None,
        base_url: str | None = None,
        max_preview_tokens: int | None = None,
        source_type: SourceType | None = None,
        lenient: bool = False,
        base_urls: dict[str, str] | None = None,
        sources: dict[str, str] | None = None,
        workflows: Sequence[str] | None = None,
    ) -> ImportPreview:
        """A dry run of :meth:`import_openapi`: what would be registered; nothing is written.

        Returns ``{catalog: {name, title, vendor, kind, openapi_version, base_url, prefix},
        valid, projected_command_count, projected_group_prefixes: [{group, count}],
        provider_contract_count, provider_contracts: [{provider, output_field, items_at,
        feeds: ["tool.param"]}], conflicts: [{name, kind, existing, ...}], warnings[],
        violations[]}``,
        plus ``command_preview`` (a list of ``{name, method, path, summary, parameters}``
        cut at about ``max_preview_tokens`` tokens) and ``command_preview_truncated`` when a
        token budget is given.

        An Arazzo document (see :meth:`import_openapi`) adds ``workflows`` (the ids its
        workflows get) and ``workflow_document`` (the document that would be saved).

        ``conflicts`` lists each name the import would clash with (a tool or workflow another
        catalog or file defines; the catalog itself when it exists: ``overwrite`` replaces
        it), with what it clashes with and how to proceed.
        """
        fetcher, fetched = await self._fetch_named(source, source_type, name, prefix)
        arazzo = _arazzo_data(fetched)
        if arazzo is not None:
            analysis = await self._arazzo(
                fetcher,
                fetched,
                arazzo,
                name,
                lenient,
                base_url,
                base_urls,
                sources,
                workflows,
                prefix,
            )
            return self._arazzo_preview(analysis, name, title, vendor, max_preview_tokens, prefix)
        result = (await self._analyse(fetched, name, prefix, include, base_url)).result
        contracts = find_provider_contracts(result.tools)
        preview: dict[str, Any] = {
            "catalog": {
                "name": name,
                "title": title or result.title,
                "vendor": vendor,
                "kind": result.kind,
                "openapi_version": result.version,
                "base_url": result.base_url,
                "prefix": prefix,
            },
            "valid": result.valid and bool(result.tools),
            "projected_command_count": len(result.tools),
            "projected_group_prefixes": group_prefixes(result.tools, prefix),
            "provider_contract_count": len(contracts),
            "provider_contracts": [c.to_dict() for c in contracts],
            "conflicts": [
                *self._exists_conflict(name),
                *self._conflicts(name, [t.name for t in result.tools]),
            ],
            "warnings": [w.to_dict() for w in result.warnings],
            "violations": [v.to_dict() for v in _all_violations(result)],
        }
        if max_preview_tokens is not None:
            entries, truncated = command_preview(result.tools, max_preview_tokens)
            preview["command_preview"] = entries
            preview["command_preview_truncated"] = truncated
        return ImportPreview.model_validate(preview)

    def list(self) -> builtins.list[Catalog]:
        """Every catalog's config, by name, with ``registered_tools`` (0 when disabled)."""
        catalogs = []
        for path in sorted(self.catalogs_dir.glob("*.yaml")) if self.catalogs_dir.is_dir() else []:
            config = read_config(path)
            if config is not None:
                catalogs.append(self._with_counts(config))
        return catalogs

    def name_for_title(self, title: str) -> str:
        """The name of the catalog titled ``title`` (case-insensitive), or named so.

        Raises:
            NotFoundError: no catalog has that title or name (the titles are listed).
        """
        wanted = title.strip().casefold()
        catalogs = self.list()
        for config in catalogs:
            if (config.title or "").strip().casefold() == wanted:
                return config.name
        for config in catalogs:
            if config.name in (title, catalog_name_for(title)):
                return config.name
        known = ", ".join(f"'{c.title}' ({c.name})" for c in catalogs) or "none"
        raise NotFoundError(
            f"no catalog is titled '{title}' (catalogs: {known})",
            context={"catalog_title": title},
        )

    def get(self, name: str) -> Catalog:
        """One catalog's config; :class:`NotFoundError` when there is none."""
        config = read_config(self._config_path(name))
        if config is None:
            raise NotFoundError(f"catalog '{name}' does not exist", context={"catalog": name})
        return self._with_counts(config)

    # --- writes ----------------------------------------------------------------------------
    @_names_content
    async def import_openapi(
        self,
        source: str | Upload,
        name: str,
        *,
        title: str | None = None,
        vendor: str | None = None,
        prefix: str | None = None,
        overwrite: bool = False,
        enabled: bool = True,
        include: Sequence[str] | None = None,
        base_url: str | None = None,
        source_type: SourceType | None = None,
        lenient: bool = False,
        base_urls: dict[str, str] | None = None,
        sources: dict[str, str] | None = None,
        workflows: Sequence[str] | None = None,
    ) -> Imported:
        """Validate, then write the catalog and its manifest, then reload the registry.

        Returns ``{catalog_id, catalog_path, manifest_path, enabled, command_count,
        provider_contract_count, warnings[]}``. Nothing is written when the document has
        violations (:class:`OpenAPIInvalidError`), when the catalog exists and ``overwrite``
        is false, or when a tool name is already registered by another file or catalog
        (:class:`ConflictError`).

        An Arazzo document imports the operations its steps use as the catalog's tools and its
        workflows as a workflow document (``<name>.arazzo.yaml``), each served as a ``w_*``
        tool; ``lenient`` reads the shortcuts some runners accept (each a warning),
        ``base_urls`` gives a base URL per source description and ``sources`` another place
        to read one from (a local copy of a remote description). ``prefix`` names an Arazzo
        catalog's tools as it does an OpenAPI one's (``<prefix>_<operation>``).

        An :class:`Upload` is imported as a path would be; its files are then kept in
        ``catalogs/<name>.upload/`` (the catalog's ``source``).
        """
        if not _name_problems(name, prefix) and not overwrite and self._config_path(name).exists():
            raise _exists(name)
        fetcher, fetched = await self._fetch_named(source, source_type, name, prefix)
        arazzo = _arazzo_data(fetched)
        if arazzo is not None:
            found = await self._arazzo(
                fetcher,
                fetched,
                arazzo,
                name,
                lenient,
                base_url,
                base_urls,
                sources,
                workflows,
                prefix,
            )
            done = await self._import_arazzo(
                found, fetched, name, title, vendor, overwrite, enabled, prefix
            )
            await self._keep_upload(name, fetcher)
            return done
        analysis = await self._analyse(fetched, name, prefix, include, base_url)
        result = analysis.result
        violations = _all_violations(result)
        if violations:
            raise OpenAPIInvalidError(
                f"the document cannot be imported as catalog '{name}'",
                violations=[v.to_dict() for v in violations],
                context={"catalog": name},
            )
        secrets = secrets_needed(result.tools)
        config = {
            "name": name,
            "source": fetched.source if fetched.source_type == "url" else fetched.location,
            "source_type": fetched.source_type,
            "kind": result.kind,
            "openapi_version": result.version,
            "title": title or result.title,
            "vendor": vendor,
            "prefix": prefix,
            "base_url": base_url,
            "include": list(include) if include is not None else None,
            "enabled": enabled,
            "document_hash": "sha256:" + hashlib.sha256(fetched.content).hexdigest(),
            "manifest": f"{name}{MANIFEST_SUFFIX}",
            "tool_count": len(result.tools),
            "secrets": secrets,
        }
        from dynamic_tools.tools.registry import dump_tool

        def dump() -> str:
            return json.dumps([dump_tool(t) for t in result.tools], separators=(",", ":"))

        manifest = await asyncio.to_thread(dump)  # megabytes for a large API: not on the loop
        names = [tool.name for tool in result.tools]  # not parsed back from the manifest
        await asyncio.to_thread(self._write, name, config, manifest, names, overwrite)
        await self._keep_upload(name, fetcher)
        return Imported.model_validate(
            {
                "catalog_id": name,
                "catalog_path": str(self._config_path(name)),
                "manifest_path": str(self._manifest_path(name)),
                "enabled": enabled,
                "command_count": len(result.tools),
                "provider_contract_count": len(find_provider_contracts(result.tools)),
                "warnings": [w.to_dict() for w in result.warnings],
                "secrets": self._secret_statuses(secrets),
            }
        )

    async def set_enabled(self, name: str, enabled: bool) -> Toggled:
        """Turn a catalog's tools on or off (its files stay).

        Returns ``{catalog_id, enabled, command_count_after_toggle}`` (the registry's size).
        Enabling fails with :class:`ConflictError` when one of its names was registered since.
        """
        return await asyncio.to_thread(self._set_enabled, name, enabled)

    async def remove(self, name: str, *, remove_manifest: bool = True) -> Removed:
        """Delete a catalog's config (and its manifest unless ``remove_manifest`` is false).

        Returns ``{removed_catalog_id, manifest_removed, remaining_catalog_count}``.
        """
        return await asyncio.to_thread(self._remove, name, remove_manifest)

    # --- internals -------------------------------------------------------------------------
    async def _open(
        self, source: str | Upload, name: str | None, source_type: SourceType | None
    ) -> tuple[DocumentSource, FetchedDocument]:
        """The fetcher to read the document's neighbours with, and the document.

        An upload is served from the catalog's upload directory (nothing is written), so
        what it names is read as a path import's would be.
        """
        if isinstance(source, str):
            return self.fetcher, await self.fetcher.fetch(source, source_type)
        files = check_upload(source)
        directory = self._upload_dir(name) if name else self.catalogs_dir / UPLOAD_SUFFIX
        fetcher = UploadSource(self.fetcher, directory, files)
        return fetcher, await fetcher.fetch(fetcher.location(next(iter(files))), "path")

    async def _keep_upload(self, name: str, fetcher: DocumentSource) -> None:
        """Store an imported upload's files in the catalog's upload directory.

        A catalog imported again from a path or URL keeps no earlier upload.
        """
        if isinstance(fetcher, UploadSource):
            await asyncio.to_thread(store_upload, fetcher.directory, fetcher.files)
        else:
            await asyncio.to_thread(remove_upload, self._upload_dir(name))

    async def _arazzo(
        self,
        fetcher: DocumentSource,
        fetched: FetchedDocument,
        raw: dict[str, Any],
        name: str,
        lenient: bool,
        base_url: str | None,
        base_urls: dict[str, str] | None,
        sources: dict[str, str] | None = None,
        workflows: Sequence[str] | None = None,
        prefix: str | None = None,
    ) -> ArazzoAnalysis:
        async def run(fn: Any, *args: Any) -> Any:
            return await self.workers.run(fn, *args, field="source")

        return await analyse_arazzo(
            fetched,
            raw,
            fetcher,
            catalog=name,
            run=run,
            store=self.workflows,
            lenient=lenient,
            base_url=base_url,
            base_urls=base_urls,
            source_locations=sources,
            workflows=workflows,
            prefix=prefix,
        )

    def _arazzo_preview(
        self,
        analysis: ArazzoAnalysis,
        name: str,
        title: str | None,
        vendor: str | None,
        max_preview_tokens: int | None,
        prefix: str | None,
    ) -> ImportPreview:
        tools = analysis.conversion.tools if analysis.conversion else []
        workflows = analysis.conversion.workflow_ids if analysis.conversion else {}
        extra: dict[str, Any] = {}
        if max_preview_tokens is not None:
            entries, truncated = command_preview(tools, max_preview_tokens)
            extra = {"command_preview": entries, "command_preview_truncated": truncated}
        return ImportPreview.model_validate(
            {
                **extra,
                "catalog": {
                    "name": name,
                    "title": title or analysis.check.title,
                    "vendor": vendor,
                    "kind": "arazzo",
                    "arazzo_version": analysis.check.arazzo_version,
                    "base_url": None,
                    "prefix": prefix,
                },
                "valid": analysis.valid,
                "lenient_accepts": analysis.lenient_accepts,
                "projected_command_count": len(tools),
                "projected_group_prefixes": group_prefixes(tools, None),
                "provider_contract_count": 0,
                "provider_contracts": [],
                "conflicts": [
                    *self._exists_conflict(name),
                    *self._conflicts(name, [t.name for t in tools]),
                    *map(
                        _workflow_conflict,
                        workflow_clashes(self.workflows, name, list(workflows.values())),
                    ),
                ],
                "warnings": analysis.warnings,
                "violations": analysis.violations,
                "workflows": list(workflows.values()),
                "workflow_document": analysis.content,
                "arazzo_workflows": [w.to_dict() for w in analysis.workflows],
            }
        )

    async def _import_arazzo(
        self,
        analysis: ArazzoAnalysis,
        fetched: FetchedDocument,
        name: str,
        title: str | None,
        vendor: str | None,
        overwrite: bool,
        enabled: bool,
        prefix: str | None,
    ) -> Imported:
        if not analysis.valid or analysis.conversion is None or analysis.content is None:
            raise OpenAPIInvalidError(
                f"the Arazzo document cannot be imported as catalog '{name}'",
                violations=analysis.violations,
                context={"catalog": name},
            )
        if self.workflows is None:
            raise InvalidInputError(
                "this server keeps no workflows: an Arazzo document cannot be imported here",
                violations=[{"path": "source", "message": "no workflow registry"}],
            )
        clashes = [
            _workflow_conflict(c)
            for c in workflow_clashes(
                self.workflows, name, list(analysis.conversion.workflow_ids.values())
            )
        ]
        if clashes:
            raise _clash(name, clashes, "workflow")
        tools = analysis.conversion.tools
        secrets = secrets_needed(tools)
        config = {
            "name": name,
            "source": fetched.source if fetched.source_type == "url" else fetched.location,
            "source_type": fetched.source_type,
            "kind": "arazzo",
            "arazzo_version": analysis.check.arazzo_version,
            "title": title or analysis.check.title,
            "vendor": vendor,
            "prefix": prefix,
            "base_url": None,
            "include": None,
            "enabled": enabled,
            "document_hash": "sha256:" + hashlib.sha256(fetched.content).hexdigest(),
            "manifest": f"{name}{MANIFEST_SUFFIX}",
            "tool_count": len(tools),
            "secrets": secrets,
            "workflow_file": workflow_file(name),
            "workflows": list(analysis.conversion.workflow_ids.values()),
        }
        from dynamic_tools.tools.registry import dump_tool

        manifest = json.dumps([dump_tool(t) for t in tools], separators=(",", ":"))
        before = await asyncio.to_thread(self._files_of, name)
        names = [tool.name for tool in tools]  # not parsed back from the manifest
        await asyncio.to_thread(self._write, name, config, manifest, names, overwrite)
        try:
            await self.workflows.save_checked(
                workflow_file(name), analysis.content, "yaml", overwrite=True
            )
        except ConflictError:
            await asyncio.to_thread(self._restore, name, before)
            raise
        except DynamicToolsError as exc:
            await asyncio.to_thread(self._restore, name, before)
            raise OpenAPIInvalidError(
                f"the workflows of catalog '{name}' could not be saved: {exc.message}",
                violations=getattr(exc, "violations", None) or [describe_error(exc)],
                context={"catalog": name},
            ) from None
        return Imported.model_validate(
            {
                "catalog_id": name,
                "catalog_path": str(self._config_path(name)),
                "manifest_path": str(self._manifest_path(name)),
                "enabled": enabled,
                "command_count": len(tools),
                "provider_contract_count": 0,
                "warnings": analysis.warnings,
                "secrets": self._secret_statuses(secrets),
                "workflows": config["workflows"],
                "workflow_file": config["workflow_file"],
                "left_out": [w.to_dict() for w in analysis.left_out],
            }
        )

    def _files_of(self, name: str) -> dict[Path, str | None]:
        """The catalog's files as they are now (None: absent), to put back after a failure."""
        paths = (self._config_path(name), self._manifest_path(name))
        return {p: p.read_text(encoding="utf-8") if p.exists() else None for p in paths}

    def _restore(self, name: str, files: dict[Path, str | None]) -> None:
        with self._lock:
            for path, text in files.items():
                if text is None:
                    if path.exists():
                        remove_atomic(path)
                else:
                    write_atomic(path, text)
            self.registry.reload()

    async def _analyse(
        self,
        fetched: FetchedDocument,
        name: str,
        prefix: str | None,
        include: Sequence[str] | None,
        base_url: str | None,
    ) -> _Analysis:
        options = ConversionOptions(
            catalog=name,
            prefix=prefix,
            base_url=base_url,
            document_url=fetched.document_url,
            include=include,
        )
        result = await self.workers.run_large(convert_fetched, fetched, options, field="source")
        return _Analysis(result, fetched)

    def _write(
        self,
        name: str,
        config: dict[str, Any],
        manifest: str,
        tools: builtins.list[str],
        overwrite: bool,
    ) -> None:
        """Write the catalog's manifest (of the tools named ``tools``) and its config."""
        with self._lock:
            previous = read_config(self._config_path(name))
            if previous is not None and not overwrite:
                raise _exists(name)
            if config["enabled"]:
                clashes = self._conflicts(name, tools)
                if clashes:
                    raise _clash(name, clashes)
            now = datetime.now(UTC).isoformat(timespec="seconds")
            config["created_at"] = (previous or {}).get("created_at", now)
            config["updated_at"] = now
            write_atomic(self._manifest_path(name), manifest + "\n")
            write_atomic(self._config_path(name), yaml.safe_dump(config, sort_keys=False))
            self.registry.reload()

    def _set_enabled(self, name: str, enabled: bool) -> Toggled:
        with self._lock:
            config = read_config(self._config_path(name))
            if config is None:
                raise NotFoundError(f"catalog '{name}' does not exist", context={"catalog": name})
            if enabled and not config.get("enabled", True):
                manifest = load_manifest(self._manifest_path(name), self.catalogs_dir.parent)
                clashes = self._conflicts(name, [t.config.name for t in manifest.tools])
                if clashes:
                    raise _clash(name, clashes)
            config["enabled"] = enabled
            config["updated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
            write_atomic(self._config_path(name), yaml.safe_dump(config, sort_keys=False))
            self.registry.reload()
            return Toggled(
                catalog_id=name,
                enabled=enabled,
                command_count_after_toggle=len(self.registry.names()),
            )

    def _remove(self, name: str, remove_manifest: bool) -> Removed:
        with self._lock:
            path = self._config_path(name)
            config = read_config(path)
            if config is None:
                raise NotFoundError(f"catalog '{name}' does not exist", context={"catalog": name})
            remove_atomic(path)
            if config.get("kind") == "arazzo" and self.workflows is not None:
                self.workflows.remove_file(workflow_file(name))
            remove_upload(self._upload_dir(name))
            manifest = self._manifest_path(name)
            removed = remove_manifest and manifest.exists()
            if removed:
                remove_atomic(manifest)
            self.registry.reload()
            return Removed(
                removed_catalog_id=name,
                manifest_removed=removed,
                remaining_catalog_count=len(list(self.catalogs_dir.glob("*.yaml"))),
            )

    def _conflicts(self, name: str, tools: Sequence[str]) -> builtins.list[dict[str, Any]]:
        """The tools another catalog or a tool file registers already, each with its place."""
        own = self._manifest_path(name).resolve()
        clashes = []
        for tool in tools:
            origin = self.registry.origin(tool)
            if origin is not None and origin.resolve() != own:
                clashes.append(_tool_conflict(tool, origin, self.catalogs_dir))
        return clashes

    def _exists_conflict(self, name: str) -> builtins.list[dict[str, Any]]:
        """The catalog itself when it exists (an import needs ``overwrite``)."""
        if not self._config_path(name).exists():
            return []
        return [
            {
                "catalog": name,
                "name": name,
                "kind": "catalog",
                "existing": f"catalog '{name}'",
                "existing_kind": "catalog",
                "existing_name": name,
                "overwrite_resolves": True,
                "how": f"choose overwrite to replace catalog '{name}', or another catalog name",
            }
        ]

    def _with_counts(self, config: dict[str, Any]) -> Catalog:
        own = self._manifest_path(str(config.get("name"))).resolve()
        registered = []
        for tool in self.registry.names():
            origin = self.registry.origin(tool)
            if origin is not None and origin.resolve() == own:
                registered.append(self.registry.get(tool))
        needed = config.get("secrets")  # recorded at import; else what its tools use now
        if not isinstance(needed, builtins.list):
            needed = secrets_needed(registered)
        return Catalog.model_validate(
            {
                **config,
                "registered_tools": len(registered),
                "secrets": self._secret_statuses(needed),
            }
        )

    def _secret_statuses(self, references: Sequence[str]) -> builtins.list[dict[str, Any]]:
        """Whether each secret a catalog's tools need is set (never the value)."""
        return [secret_status(reference, self.secret) for reference in references]

    def _config_path(self, name: str) -> Path:
        return self.catalogs_dir / f"{name}.yaml"

    def _manifest_path(self, name: str) -> Path:
        return self.catalogs_dir / f"{name}{MANIFEST_SUFFIX}"

    def _upload_dir(self, name: str) -> Path:
        return self.catalogs_dir / f"{name}{UPLOAD_SUFFIX}"


@dataclass(frozen=True)
class _Analysis:
    result: ConversionResult
    fetched: FetchedDocument


def convert_fetched(fetched: FetchedDocument, options: ConversionOptions) -> ConversionResult:
    """Parse and convert a fetched document (a document worker's task).

    A GraphQL schema (SDL or an introspection answer) becomes its root fields' tools. The
    garbage collector stays paused from parsing to the last tool (see
    :func:`~dynamic_tools.safe_parsing.gc_paused`).
    """
    if looks_like_graphql(fetched.content):
        return convert_graphql(fetched.content, options)
    with gc_paused():
        try:
            document = parse_document(fetched.content)
        except InvalidInputError as exc:
            raise OpenAPIInvalidError(exc.message, violations=exc.violations) from None
        return convert_document(document, options)


def _arazzo_data(fetched: FetchedDocument) -> dict[str, Any] | None:
    """The parsed document when it is an Arazzo document, else None."""
    if b"arazzo" not in fetched.content[:4096]:
        return None
    try:
        data = parse_document(fetched.content)
    except InvalidInputError:
        return None
    return data if is_arazzo(data) else None


def _all_violations(result: ConversionResult) -> list[Issue]:
    if result.valid and not result.tools and result.operation_count:
        return [Issue("#/paths", "no_tools", "no operation could be converted; see warnings")]
    return list(result.violations)


def _tool_conflict(tool: str, origin: Path, catalogs_dir: Path) -> dict[str, Any]:
    """A tool name another catalog (or a tool file) registers: where, and how to proceed."""
    if origin.parent.resolve() == catalogs_dir.resolve() and origin.name.endswith(MANIFEST_SUFFIX):
        other = origin.name.removesuffix(MANIFEST_SUFFIX)
        kind, existing, place = "catalog", other, f"catalog '{other}'"
        how = f"give a tool prefix, or disable or remove catalog '{other}'"
    else:
        kind, existing, place = "tool_file", f"tools/{origin.name}", f"tools/{origin.name}"
        how = f"give a tool prefix, or rename or remove the tool in {place}"
    return {
        "tool": tool,
        "name": tool,
        "kind": "tool",
        "existing": place,
        "existing_kind": kind,
        "existing_name": existing,
        "overwrite_resolves": False,
        "how": how,
    }


def _workflow_conflict(clash: dict[str, str]) -> dict[str, Any]:
    """A workflow id another workflow file defines (``workflow_clashes``), and how to proceed."""
    place = clash["existing"]
    return {
        **clash,
        "name": clash["workflow"],
        "kind": "workflow",
        "existing_kind": "workflow_file",
        "existing_name": place,
        "overwrite_resolves": False,
        "how": f"leave the workflow out, or rename or remove it in {place}",
    }


def catalog_name_for(title: str) -> str:
    """A catalog name made from a title: ``"Pet Store API"`` → ``"pet-store-api"``.

    A title that is already a valid name is kept as it is.
    """
    if CATALOG_NAME.match(title):
        return title
    slug = re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")[:64].strip("-")
    return slug or "catalog"


CATALOG_NAME_WORDS = "1-64 letters, digits, '-' or '_', starting with a letter or digit"
CATALOG_PREFIX_WORDS = "1-32 letters, digits, '-' or '_', starting with a letter or digit"


def _name_problems(name: str, prefix: str | None) -> list[dict[str, Any]]:
    """The violations of a catalog name and tool name prefix (none when both are fine)."""
    problems = []
    if not CATALOG_NAME.fullmatch(name):
        problems.append(
            {
                "path": "name",
                "rule": "pattern",
                "message": f"a catalog name is {CATALOG_NAME_WORDS}",
            }
        )
    if prefix is not None and not CATALOG_PREFIX.fullmatch(prefix):
        problems.append(
            {
                "path": "prefix",
                "rule": "pattern",
                "message": f"a tool name prefix is {CATALOG_PREFIX_WORDS}",
            }
        )
    return problems


def _exists(name: str) -> ConflictError:
    return ConflictError(
        f"catalog '{name}' already exists; pass overwrite to replace it",
        kind=ConflictKind.CATALOG_EXISTS,
        context={"catalog": name},
    )


def _clash(name: str, clashes: list[dict[str, Any]], what: str = "tool") -> ConflictError:
    """A 409 naming the first ``tool`` (or ``workflow``) another definition has already."""
    first = clashes[0]
    fix = "use a prefix or remove" if what == "tool" else "rename or remove"
    return ConflictError(
        f"catalog '{name}' would register {what} '{first[what]}', already defined by "
        f"{first['existing']}"
        + (f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else "")
        + f"; {fix} the other definition",
        kind=ConflictKind.NAME_CLASH,
        context={"catalog": name, "conflicts": clashes},
    )


__all__ = ["CATALOG_NAME", "CatalogService", "catalog_name_for", "load_catalog_tools"]
