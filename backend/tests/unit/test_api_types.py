"""frontend/src/api/schema.d.ts is what the server's OpenAPI document generates (make api-types)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "gen_api_types.py"


def test_the_ui_api_types_are_generated_from_the_current_document(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_api_types", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fresh = tmp_path / "schema.d.ts"
    module.generate(fresh)
    committed = ROOT / "frontend" / "src" / "api" / "schema.d.ts"
    assert committed.read_text() == fresh.read_text(), "stale: run `make api-types`"


def test_the_document_carries_the_closed_set_of_run_events() -> None:
    from dynamic_tools.engine.events import EVENT_TYPES

    text = (ROOT / "frontend" / "src" / "api" / "schema.d.ts").read_text()
    for name in EVENT_TYPES:
        assert f'type: "{name}"' in text, name
