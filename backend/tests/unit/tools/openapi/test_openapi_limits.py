"""``$ref`` expansion measured while it is built: bombs refused at the first expansion past a
limit, deep schemas skipped, ordinary documents untouched."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.openapi import ConversionOptions, convert_document, parse_document
from dynamic_tools.tools.openapi.operations import Limits
from tests.support.hostile import fenced, nested_json, nested_object_json, ref_bomb

_CONVERT_BOMB = """
import json, sys, time
from dynamic_tools.tools.openapi import convert_document
from tests.support.hostile import ref_bomb
started = time.perf_counter()
result = convert_document(ref_bomb(int(sys.argv[1]), int(sys.argv[2])))
print(json.dumps({
    "tools": len(result.tools),
    "violations": [v.to_dict() for v in result.violations],
    "seconds": time.perf_counter() - started,
}))
"""


@pytest.mark.parametrize(("levels", "width"), [(8, 10), (6, 10), (5, 40), (12, 10)])
def test_a_ref_bomb_is_refused_naming_the_limit_and_the_reference(levels: int, width: int) -> None:
    # Fenced: before the fix, 8x10 grew a process to 23 GB.
    result = fenced(_CONVERT_BOMB, str(levels), str(width))
    assert result["tools"] == 0
    violation = result["violations"][0]
    assert violation["rule"] == "max_schema_bytes"
    assert violation["path"] == "#/paths/~1x/post"
    assert violation["expected"] == 2 * 1024 * 1024
    assert "#/components/schemas/L" in violation["message"]


def test_a_small_fan_out_converts() -> None:
    result = convert_document(ref_bomb(3, 10))
    assert result.valid and len(result.tools) == 1


def test_the_document_limits_count_every_copy() -> None:
    limits = Limits(max_document_bytes=20_000, max_schema_bytes=1_000_000)
    result = convert_document(ref_bomb(4, 10), ConversionOptions(limits=limits))
    assert [v.rule for v in result.violations] == ["max_document_bytes"]
    limits = Limits(max_document_refs=50)
    result = convert_document(ref_bomb(3, 10), ConversionOptions(limits=limits))
    assert [v.rule for v in result.violations] == ["max_document_refs"]


def _deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_an_operation_whose_schema_nests_too_deep_is_skipped() -> None:
    document = ref_bomb(1, 1)
    document["paths"]["/deep"] = {
        "get": {
            "operationId": "deep",
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": _deep_schema(45)}},
                }
            },
        }
    }
    result = convert_document(document)
    assert [t.name for t in result.tools] == ["explode"]
    skipped = [w for w in result.warnings if w.rule == "max_schema_levels"]
    assert skipped and skipped[0].path == "#/paths/~1deep/get"


@pytest.mark.parametrize(
    "text",
    [nested_json(10_000), nested_object_json(150), "openapi: 3.0.3\nx: " + nested_json(100_000)],
)
def test_a_document_nested_too_deep_is_refused_before_it_is_parsed_fully(text: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_document(text)
    violation = caught.value.violations[0]
    assert violation["path"] == "source" and violation["rule"] == "max_depth"
    assert violation["expected"] == 100
