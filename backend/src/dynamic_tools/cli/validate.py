"""``dynamic-tools validate``: load and validate workflow files against the tool registry.

The verdict is the server's: calls are checked against the registry's tools (names and
arguments), sub-workflows against the files given and the registry's saved workflows. With
``--server`` a running server gives it (``POST /workflows/validate``): its tools and its saved
workflows, each file on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynamic_tools.bootstrap import make_registry, make_workflows
from dynamic_tools.engine.loaders import LoadedDocument, detect_format, load_document
from dynamic_tools.engine.models import Workflow
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.errors import WorkflowInvalidError
from dynamic_tools.settings import Settings

if TYPE_CHECKING:
    from dynamic_tools.cli.runs import RunsClient


def validate_files(
    files: list[Path], *, settings: Settings, tools_dir: Path | None = None
) -> dict[Path, list[dict[str, Any]]]:
    """Violations per file.

    Calls are checked against the tools of ``tools_dir`` (default: the registry's) when that
    directory exists. Sub-workflows may live in any of the files given, or be saved in the
    registry's workflow directory.
    """
    registry = make_registry(settings, tools_dir=tools_dir)
    known_tools: dict[str, dict[str, Any]] | None = None
    if registry.tools_dir.is_dir():
        registry.reload()
        known_tools = registry.input_schemas()
    saved: dict[str, Workflow] = {}
    if settings.workflows_dir.is_dir():
        repository = make_workflows(settings, registry)
        repository.reload()
        saved = repository.definitions()  # the files given win over a saved version
    results: dict[Path, list[dict[str, Any]]] = {}
    loaded: dict[Path, LoadedDocument] = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            results[path] = [_file_error(str(exc))]
            continue
        try:
            loaded[path] = load_document(text, name=path.name)
        except WorkflowInvalidError as exc:
            results[path] = exc.violations
    workflows = {**saved}
    for doc in loaded.values():
        workflows.update(doc.document.workflows)
    for path, doc in loaded.items():
        report = validate_document(doc, known_tools=known_tools, known_workflows=workflows)
        results[path] = [v.to_dict() for v in report.violations]
    return {path: results[path] for path in files if path in results}


def validate_on_server(files: list[Path], client: RunsClient) -> dict[Path, list[dict[str, Any]]]:
    """Violations per file, as a running server judges each (its tools, its saved workflows).

    Raises:
        httpx.HTTPError: the server cannot be reached, or refuses the request.
    """
    results: dict[Path, list[dict[str, Any]]] = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            results[path] = [_file_error(str(exc))]
            continue
        verdict = client.validate(text, detect_format(path.name, text))
        results[path] = list(verdict.get("violations") or [])
    return results


def _file_error(message: str) -> dict[str, Any]:
    return {
        "path": "(file)",
        "rule": "unreadable",
        "message": message,
        "severity": "error",
        "line": None,
        "expected": None,
        "actual": None,
    }
