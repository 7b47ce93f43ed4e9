"""Hostile documents for the input-limit tests: $ref bombs, deep nesting, the largest workflow."""

from __future__ import annotations

import json
from typing import Any

from dynamic_tools.engine.loaders import MAX_DOCUMENT_BYTES


def ref_bomb(levels: int = 8, width: int = 10) -> dict[str, Any]:
    """An OpenAPI 3.0 document whose schema ``L<levels>`` holds ``width`` references to the
    level below, down to a string: inlined, it is ``width**levels`` copies (8x10: 10^8)."""
    schemas: dict[str, Any] = {"L0": {"type": "string", "description": "a leaf"}}
    for level in range(1, levels + 1):
        schemas[f"L{level}"] = {
            "type": "object",
            "properties": {
                f"p{i}": {"$ref": f"#/components/schemas/L{level - 1}"} for i in range(width)
            },
        }
    top = {"$ref": f"#/components/schemas/L{levels}"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "bomb", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/x": {
                "post": {
                    "operationId": "explode",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": top}},
                    },
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": top}},
                        }
                    },
                }
            }
        },
        "components": {"schemas": schemas},
    }


def ref_bomb_text(levels: int = 8, width: int = 10) -> str:
    """:func:`ref_bomb` as compact JSON (8x10: about 4 KB)."""
    return json.dumps(ref_bomb(levels, width), separators=(",", ":"))


def nested_json(depth: int) -> str:
    """A JSON array nested ``depth`` levels deep."""
    return "[" * depth + "]" * depth


def nested_object_json(depth: int) -> str:
    """A JSON object nested ``depth`` levels deep (``{"a": {"a": ... 1}}``)."""
    return '{"a":' * depth + "1" + "}" * depth


def largest_workflow_yaml(limit: int = MAX_DOCUMENT_BYTES) -> str:
    """A valid-looking YAML workflow document just under ``limit`` bytes: many workflows of
    chained calls, the costliest kind of document to parse and check that is allowed."""
    head = "domain: load\nworkflows:\n"
    parts = [head]
    size = len(head)
    index = 0
    while True:
        block = (
            f"  w{index}:\n"
            f"    description: workflow number {index} of a large document\n"
            "    params: {city: {type: str, required: true}}\n"
            "    graph:\n"
            + "".join(
                f"      n{step}: {{call: search_hotels, args: {{city: $city, checkin: "
                f'"2026-12-01", checkout: "2026-12-02"}}, output: o{step}'
                + (f", depends_on: [n{step - 1}]" if step else "")
                + "}\n"
                for step in range(8)
            )
        )
        if size + len(block) > limit:
            break
        parts.append(block)
        size += len(block)
        index += 1
    return "".join(parts)


FENCE_MB = 1536


def fenced(
    code: str,
    *args: str,
    env: dict[str, str] | None = None,
    memory_mb: int = FENCE_MB,
    timeout: float = 180,
) -> Any:
    """Run Python ``code`` in a subprocess whose address space is capped at ``memory_mb``.

    For tests that would eat the machine's memory if the code under test regressed (a ``$ref``
    bomb expanded for real): the regression fails the test (MemoryError, a non-zero exit)
    instead. ``code`` sees ``args`` in ``sys.argv[1:]`` and prints its result as the last line
    of JSON; that value is returned. The subprocess runs from the backend directory with the
    environment plus ``env``.
    """
    import os
    import subprocess
    import sys
    from pathlib import Path

    backend = Path(__file__).resolve().parents[2]
    prologue = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({memory_mb} << 20, {memory_mb} << 20))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prologue + code, *args],
        cwd=backend,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])
