import pytest

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.openapi import detect_kind, parse_document
from tests.unit.tools.openapi.conftest import OPENAPI, load


def test_json_and_yaml_of_the_same_document_parse_to_the_same_data() -> None:
    assert load("petstore-3.0.yaml") == load("petstore-3.0.json")


@pytest.mark.parametrize(
    ("name", "kind", "version"),
    [
        ("petstore-2.0.json", "openapi_2", "2.0"),
        ("petstore-3.0.json", "openapi_3", "3.0.0"),
        ("petstore-3.1.json", "openapi_3", "3.1.0"),
    ],
)
def test_kind_detection_on_the_real_petstores(name: str, kind: str, version: str) -> None:
    assert detect_kind(load(name)) == (kind, version)


@pytest.mark.parametrize(
    "document",
    [[], "text", {"openapi": "2.5.0"}, {"swagger": "1.2"}, {"info": {}}, {"openapi": 3.0}],
)
def test_anything_else_is_unknown(document: object) -> None:
    assert detect_kind(document)[0] == "unknown"


def test_size_limit_names_the_limit_and_the_size() -> None:
    content = (OPENAPI / "petstore-3.0.json").read_bytes()
    with pytest.raises(InvalidInputError) as caught:
        parse_document(content, max_bytes=1000)
    violation = caught.value.violations[0]
    assert violation["rule"] == "max_size" and violation["path"] == "source"
    assert violation["expected"] == 1000 and violation["actual"] == len(content)


def test_syntax_errors_give_line_and_column() -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_document(b'{"openapi": "3.0.0",\n "paths": {,}}')
    assert "line 2" in caught.value.message
    with pytest.raises(InvalidInputError) as caught:
        parse_document("openapi: 3.0.0\npaths:\n  - a\n  b: [")
    assert "invalid YAML" in caught.value.message and "line" in caught.value.message


def test_yaml_python_tags_are_refused() -> None:
    with pytest.raises(InvalidInputError):
        parse_document("!!python/object/apply:os.system ['echo hacked']")


def test_a_yaml_alias_bomb_is_refused_before_it_is_walked() -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    with pytest.raises(InvalidInputError) as caught:
        parse_document("\n".join(lines))
    assert caught.value.violations[0]["rule"] == "max_nodes"


def test_non_utf8_and_empty_content_are_invalid() -> None:
    with pytest.raises(InvalidInputError, match="UTF-8"):
        parse_document(b"\xff\xfe\x00openapi")
    with pytest.raises(InvalidInputError, match="empty"):
        parse_document(b"   \n")
