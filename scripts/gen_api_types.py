#!/usr/bin/env python3
"""Generate the web UI's API types from the server's OpenAPI document.

The document is built in process (``create_app(...).openapi()``, no server started) with the
default settings, written to a temporary file and turned into TypeScript by
``openapi-typescript`` (a dev dependency of ``frontend/``). ``frontend/src/api/schema.d.ts`` is
the result; ``make api-types`` runs this, and a test fails when the committed file is stale.

Which fields are optional: a request field with a default may be left out, while an answer
holds every field of its model (pydantic writes a default that was not given), except the keys
a ``Sparse`` view leaves out when they were not given and an event's fields left out while
unset. The document lists as required only the fields without a default, so
openapi-typescript runs with ``--default-non-nullable false`` (a field with a default is
optional: the UI need not send defaults), and each schema only answers use lists every field
its answers always hold as required first (:func:`answers_require_their_fields`): the UI reads
them without checks.

Usage: ``backend/.venv/bin/python scripts/gen_api_types.py [OUTPUT]``.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FRONTEND = ROOT / "frontend"
DEFAULT_OUTPUT = FRONTEND / "src" / "api" / "schema.d.ts"
_COMPONENT = "#/components/schemas/"


def openapi_document() -> dict[str, object]:
    """The server's OpenAPI document with the default settings (no I/O beyond a temp dir)."""
    from dynamic_tools.api.app import create_app
    from dynamic_tools.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            registry_config_path=Path(tmp) / "registry" / "config.yaml",
            data_dir=Path(tmp) / "data",
            durable_runs=False,
            _env_file=None,  # type: ignore[call-arg]
        )
        document: dict[str, object] = create_app(settings).openapi()
    return document


def _schema_refs(node: object, schemas: dict[str, Any], found: set[str]) -> None:
    """Add to ``found`` the component schemas ``node`` refers to, directly or not."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_COMPONENT):
            name = ref.removeprefix(_COMPONENT)
            if name not in found:
                found.add(name)
                _schema_refs(schemas[name], schemas, found)
        for value in node.values():
            _schema_refs(value, schemas, found)
    elif isinstance(node, list):
        for item in node:
            _schema_refs(item, schemas, found)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _answer_keys() -> dict[str, tuple[set[str], set[str]]]:
    """Per model name: the keys its answers hold, and those they may leave out.

    A pydantic model writes every field, except those a ``SPARSE`` (``sparse.Sparse``) or an
    ``OMIT_NONE`` (the run events) leaves out; a model with another serializer of its own is
    not listed (what it writes is its own).
    """
    from pydantic import BaseModel

    keys: dict[str, tuple[set[str], set[str]]] = {}
    for model in _subclasses(BaseModel):
        if not model.__module__.startswith("dynamic_tools."):
            continue
        omitted = set(getattr(model, "SPARSE", ()) or ()) | set(getattr(model, "OMIT_NONE", ()))
        serializers = model.__pydantic_decorators__.model_serializers
        if serializers and not omitted and not hasattr(model, "SPARSE"):
            continue
        written = set()
        for name, field in model.model_fields.items():
            if not field.exclude:
                written.add(field.serialization_alias or field.alias or name)
        keys[model.__name__] = (written, omitted)
    for name, found in _dataclass_keys().items():
        keys.setdefault(name, found)  # a pydantic model of the same name wins
    return keys


def _dataclass_keys() -> dict[str, tuple[set[str], set[str]]]:
    """Per name, the keys pydantic writes for a dataclass of the project an answer holds.

    An answer may hold an engine record as it is (a run's ``NodeState``): pydantic writes
    every field of a dataclass.
    """
    import dataclasses
    import sys

    found: dict[str, tuple[set[str], set[str]]] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("dynamic_tools."):
            continue
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == name
            ):
                found.setdefault(
                    value.__name__, ({f.name for f in dataclasses.fields(value)}, set())
                )
    return found


def answers_require_their_fields(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with each answer's fields required, unless it may leave them out (a copy).

    A schema only answers use (no request body or parameter refers to it) of a model of the
    project lists every field its answers always hold as required: pydantic writes every field
    (with its default when not given), except the ones a ``Sparse`` model or a run event leaves
    out. The document itself lists only the fields without a default.
    """
    document = copy.deepcopy(document)
    schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
    sent: set[str] = set()
    answered: set[str] = set()
    for item in document.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            _schema_refs(operation.get("requestBody", {}), schemas, sent)
            _schema_refs(operation.get("parameters", []), schemas, sent)
            _schema_refs(operation.get("responses", {}), schemas, answered)
    models = _answer_keys()
    for name in sorted(answered - sent):
        schema = schemas[name]
        if name not in models or not isinstance(schema.get("properties"), dict):
            continue
        written, omitted = models[name]
        properties = set(schema["properties"])
        if properties != written:  # not this model's schema (another of the same name)
            continue
        required = list(schema.get("required", []))
        required += sorted(properties - omitted - set(required))
        schema["required"] = required
    return document


def generate(output: Path) -> None:
    """Write the TypeScript types of the document to ``output``."""
    tool = FRONTEND / "node_modules" / ".bin" / "openapi-typescript"
    if not tool.exists():
        raise SystemExit(f"{tool} is missing: run `cd frontend && npm ci` first")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "openapi.json"
        document = answers_require_their_fields(openapi_document())
        source.write_text(json.dumps(document, indent=1, sort_keys=True))
        subprocess.run(
            [
                str(tool),
                str(source),
                "--output",
                str(output),
                "--default-non-nullable",
                "false",
            ],
            check=True,
            cwd=FRONTEND,
            capture_output=True,
            timeout=120,
        )


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)
