#!/usr/bin/env python3
"""Generate the web UI's API types from the server's OpenAPI document.

The document is built in process (``create_app(...).openapi()``, no server started) with the
default settings, written to a temporary file and turned into TypeScript by
``openapi-typescript`` (a dev dependency of ``frontend/``). ``frontend/src/api/schema.d.ts`` is
the result; ``make api-types`` runs this, and a test fails when the committed file is stale.

Usage: ``backend/.venv/bin/python scripts/gen_api_types.py [OUTPUT]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRONTEND = ROOT / "frontend"
DEFAULT_OUTPUT = FRONTEND / "src" / "api" / "schema.d.ts"


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


def generate(output: Path) -> None:
    """Write the TypeScript types of the document to ``output``."""
    tool = FRONTEND / "node_modules" / ".bin" / "openapi-typescript"
    if not tool.exists():
        raise SystemExit(f"{tool} is missing: run `cd frontend && npm ci` first")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "openapi.json"
        source.write_text(json.dumps(openapi_document(), indent=1, sort_keys=True))
        subprocess.run(
            [str(tool), str(source), "--output", str(output)],
            check=True,
            cwd=FRONTEND,
            capture_output=True,
            timeout=120,
        )


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)
