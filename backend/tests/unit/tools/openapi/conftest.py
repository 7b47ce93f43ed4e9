"""Shared helpers for the OpenAPI tests: fixture documents, converted once per test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dynamic_tools.tools.openapi import ConversionOptions, ConversionResult, convert_document
from dynamic_tools.tools.openapi import parse_document as parse
from tests.conftest import FIXTURES

OPENAPI = FIXTURES / "openapi"


def load(name: str) -> Any:
    return parse(Path(OPENAPI / name).read_bytes())


def convert(name: str, **options: Any) -> ConversionResult:
    return convert_document(load(name), ConversionOptions(**options))
