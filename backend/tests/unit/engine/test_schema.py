from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from dynamic_tools.engine.loaders import detect_format, parse_raw
from dynamic_tools.engine.schema import document_schema
from tests.conftest import EXAMPLES, FIXTURES

DOCUMENTS = sorted((FIXTURES / "workflows" / "seeds").glob("seed*")) + sorted(
    (EXAMPLES / "workflows").iterdir()
)


def test_the_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(document_schema())


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_seed_and_example_conforms_to_the_schema(path: Path) -> None:
    text = path.read_text()
    raw, _ = parse_raw(text, detect_format(path.name, text))
    assert list(Draft202012Validator(document_schema()).iter_errors(raw)) == []


def test_the_schema_rejects_what_the_model_rejects() -> None:
    bad = {"workflows": {"w": {"graph": {"n": {"type": "teleport"}}}}}
    assert list(Draft202012Validator(document_schema()).iter_errors(bad))
