from pathlib import Path

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.models import BranchNode, CallNode, ErrorNode
from dynamic_tools.errors import WorkflowInvalidError
from tests.conftest import EXAMPLES, FIXTURES

SEEDS = FIXTURES / "workflows" / "seeds"


def load(path: Path):  # type: ignore[no-untyped-def]
    return load_document(path.read_text(), name=path.name)


def test_the_three_formats_of_the_seed_load_to_the_same_model() -> None:
    yaml_doc = load(SEEDS / "seed000_book_flight.yaml").document
    xml_doc = load(SEEDS / "seed000_book_flight.xml").document
    assert yaml_doc == xml_doc
    graph = yaml_doc.workflows["book_flight"].graph
    assert isinstance(graph["decide"], BranchNode)
    assert graph["decide"].default == "waitlist"
    assert graph["decide"].on[0].when == "$availability.seats_available > 0"
    reserve = graph["reserve"]
    assert isinstance(reserve, CallNode) and reserve.on_error is not None
    assert (reserve.on_error.retry, reserve.on_error.delay) == (2, 1000)
    assert isinstance(graph["fail_booking"], ErrorNode)
    json_doc = load(SEEDS / "seed000_book_flight.json").document
    assert json_doc.workflows["book_flight"].graph["search"] == graph["search"]


@pytest.mark.parametrize(
    "path",
    sorted(SEEDS.glob("*.*[!d]")) + sorted((EXAMPLES / "workflows").iterdir()),
    ids=lambda p: p.name,
)
def test_every_seed_and_example_document_loads(path: Path) -> None:
    assert load(path).document.workflows


def test_yaml_12_booleans_keep_the_on_key_and_yes_as_text() -> None:
    text = """
workflows:
  w:
    params: {answer: {type: str, default: yes}}
    graph:
      d: {type: branch, on: [{when: "true", goto: x}]}
      x: {type: error, message: "no"}
"""
    doc = load_document(text, name="w.yaml").document
    assert doc.workflows["w"].params["answer"].default == "yes"
    assert isinstance(doc.workflows["w"].graph["d"], BranchNode)


def test_syntax_errors_name_the_line_and_column() -> None:
    with pytest.raises(WorkflowInvalidError) as info:
        load_document("workflows:\n  w: [unclosed\n", name="w.yaml")
    assert info.value.violations[0]["rule"] == "syntax"
    assert (info.value.violations[0]["line"], info.value.violations[0]["column"]) == (3, 1)
    assert "line 3, column 1" in info.value.message
    with pytest.raises(WorkflowInvalidError) as info:
        load_document('{"workflows": }', name="w.json")
    assert (info.value.violations[0]["line"], info.value.violations[0]["column"]) == (1, 15)


def test_model_errors_carry_paths_and_lines() -> None:
    with pytest.raises(WorkflowInvalidError) as info:
        load(FIXTURES / "workflows" / "invalid" / "bad_model.yaml")
    found = {(v["path"], v["line"]) for v in info.value.violations}
    assert ("workflows.w.graph.n1.on_error.retry", 7) in found
    assert ("workflows.w.graph.n1.on_error.backoff", 7) in found
    assert ("workflows.w.graph.n1.on_error.retry_on", 7) in found
    assert ("workflows.w.graph.n2", 8) in found


def test_an_alias_bomb_is_refused() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev = chr(ord("a") + i - 1)
        name = chr(ord("a") + i)
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(WorkflowInvalidError) as info:
        load_document("\n".join(levels), name="bomb.yaml")
    assert info.value.violations[0]["rule"] == "max_nodes"


def test_deep_nesting_and_huge_documents_are_refused() -> None:
    deep = "workflows: " + "[" * 100 + "]" * 100
    with pytest.raises(WorkflowInvalidError) as info:
        load_document(deep, name="deep.yaml")
    assert info.value.violations[0]["rule"] == "max_depth"
    with pytest.raises(WorkflowInvalidError) as info:
        load_document('{"workflows": ' + "[" * 100 + "]" * 100 + "}", name="deep.json")
    assert info.value.violations[0]["rule"] == "max_depth"
    with pytest.raises(WorkflowInvalidError) as info:
        load_document("# " + "x" * 1_100_000, name="big.yaml")
    assert info.value.violations[0]["rule"] == "max_size"


def test_xml_entities_and_external_references_are_refused() -> None:
    entity = """<?xml version="1.0"?>
<!DOCTYPE workflows [<!ENTITY x "boom">]>
<workflows><workflow id="w"><graph><error id="e" message="&x;"/></graph></workflow></workflows>"""
    with pytest.raises(WorkflowInvalidError) as info:
        load_document(entity, name="w.xml")
    assert info.value.violations[0]["rule"] == "unsafe_xml"
    external = """<?xml version="1.0"?>
<!DOCTYPE workflows SYSTEM "http://169.254.169.254/evil.dtd">
<workflows/>"""
    with pytest.raises(WorkflowInvalidError):
        load_document(external, name="w.xml")


def test_xml_errors_name_the_element() -> None:
    text = '<workflows><workflow id="w"><graph><teleport id="t"/></graph></workflow></workflows>'
    with pytest.raises(WorkflowInvalidError) as info:
        load_document(text, name="w.xml")
    assert "unknown node element <teleport>" in info.value.message
    assert info.value.violations[0]["path"] == "workflows.w.graph.t"
