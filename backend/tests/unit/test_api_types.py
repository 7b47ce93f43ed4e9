"""frontend/src/api/schema.d.ts is what the server's OpenAPI document generates (make api-types)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "gen_api_types.py"


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_api_types", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ui_api_types_are_generated_from_the_current_document(tmp_path: Path) -> None:
    module = _generator()
    fresh = tmp_path / "schema.d.ts"
    module.generate(fresh)
    committed = ROOT / "frontend" / "src" / "api" / "schema.d.ts"
    assert committed.read_text() == fresh.read_text(), "stale: run `make api-types`"


def test_the_document_carries_the_closed_set_of_run_events() -> None:
    from dynamic_tools.engine.events import EVENT_TYPES

    text = (ROOT / "frontend" / "src" / "api" / "schema.d.ts").read_text()
    for name in EVENT_TYPES:
        assert f'type: "{name}"' in text, name


def test_defaults_are_optional_in_requests_and_present_in_answers() -> None:
    """A request may leave a defaulted field out; an answer's field is required unless the
    answer may leave it out (a Sparse view's key not given, an event's field while unset)."""
    module = _generator()
    schemas = module.answers_require_their_fields(module.openapi_document())["components"][
        "schemas"
    ]

    def required(name: str) -> set[str]:
        return set(schemas[name].get("required", []))

    assert "format_response" not in required("WorkflowRequest")  # a request's default
    assert {"warnings", "timings_ms", "usage", "sql", "http_spec"} <= required("WorkflowResponse")
    assert {"message", "path", "rule", "line"} <= required("Problem")
    assert not {"column", "expected", "severity"} & required("Problem")  # Sparse: when given
    assert "seq" not in required("RunEventRunFailed")  # an event's field left out while unset
    assert {"position", "error"} <= required("RunEventRunFailed")
    text = (ROOT / "frontend" / "src" / "api" / "schema.d.ts").read_text()
    assert "format_response?: boolean;" in text
