"""Recursive ``$ref``s are cut with a warning naming them; long names are shortened stably."""

import json
import re

from dynamic_tools.tools.models import TOOL_NAME_PATTERN
from dynamic_tools.tools.openapi import ConversionOptions, convert_document
from dynamic_tools.tools.openapi.issues import IssueLog
from dynamic_tools.tools.openapi.names import NameAllocator, shorten
from dynamic_tools.tools.openapi.refs import SchemaResolver
from tests.unit.tools.openapi.conftest import convert, load


def test_recursive_refs_are_cut_once_each_with_a_warning_naming_the_ref() -> None:
    result = convert("recursive-refs-3.0.yaml")
    assert result.valid and {t.name for t in result.tools} == {
        "getNode",
        "listPeople",
        "createTree",
    }
    recursive = [w for w in result.warnings if w.rule == "recursive_ref"]
    assert {w.path for w in recursive} == {
        "#/components/schemas/Node",
        "#/components/schemas/Person",
    }
    assert all(w.path in w.message for w in recursive)
    node = next(t for t in result.tools if t.name == "getNode").output_schema
    assert node is not None
    parent = node["properties"]["parent"]
    assert (
        parent["type"] == "object"
        and "recursive reference to #/components/schemas/Node" in (parent["description"])
    )
    assert node["properties"]["children"]["items"] == parent
    json.dumps(node)  # finite: no cycle left in the data


def test_mutual_recursion_and_openapi_30_keywords() -> None:
    people = next(t for t in convert("recursive-refs-3.0.yaml").tools if t.name == "listPeople")
    person = people.output_schema["items"]  # type: ignore[index]
    assert person["properties"]["name"]["type"] == ["string", "null"]  # nullable
    company = person["properties"]["employer"]
    assert company["properties"]["id"] == {"type": "integer", "exclusiveMinimum": 0}
    cut = company["properties"]["employees"]["items"]
    assert cut["type"] == "object" and "#/components/schemas/Person" in cut["description"]


def test_a_recursive_request_body_becomes_parameters_with_the_cut_inside() -> None:
    tree = next(t for t in convert("recursive-refs-3.0.yaml").tools if t.name == "createTree")
    assert set(tree.parameters) == {"name", "parent", "children"}
    assert tree.parameters["name"].required and not tree.parameters["parent"].required
    assert "recursive reference" in tree.parameters["parent"].schema_["description"]


def test_swagger_recursion_is_reported_at_its_own_place() -> None:
    result = convert("schema-circular-2.0.json")
    assert [w.path for w in result.warnings if w.rule == "recursive_ref"] == ["#/definitions/node"]


def test_cut_results_do_not_depend_on_the_order_operations_are_converted_in() -> None:
    document = load("recursive-refs-3.0.yaml")
    all_tools = {t.name: t for t in convert_document(document, ConversionOptions()).tools}
    alone = convert_document(document, ConversionOptions(include=["listPeople"])).tools[0]
    assert alone.output_schema == all_tools["listPeople"].output_schema


def test_unresolved_and_external_refs_are_described_not_fatal() -> None:
    log = IssueLog()
    resolver = SchemaResolver({"components": {}}, log, openapi_30=False)
    schema = resolver.schema(
        {
            "type": "object",
            "properties": {
                "a": {"$ref": "#/components/schemas/Missing"},
                "b": {"$ref": "other.yaml#/Thing"},
            },
        },
        max_depth=5,
    )
    assert schema["properties"]["a"] == {
        "description": "unresolved reference #/components/schemas/Missing"
    }
    assert {i.rule for i in log.items} == {"unresolved_ref"} and len(log.items) == 2


def test_deep_nesting_is_summarised_without_adding_constraints() -> None:
    document = {
        "components": {
            "schemas": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
                "B": {"type": "object", "properties": {"c": {"$ref": "#/components/schemas/C"}}},
                "C": {"type": "string", "title": "The C", "nullable": True},
            }
        }
    }
    resolver = SchemaResolver(document, IssueLog(), openapi_30=True)
    shallow = resolver.schema({"$ref": "#/components/schemas/A"}, max_depth=2)
    c = shallow["properties"]["b"]["properties"]["c"]
    assert "type" not in c and "The C" in c["description"]  # nullable: no type claimed
    assert resolver.depth_cuts == 1
    deep = resolver.schema({"$ref": "#/components/schemas/A"}, max_depth=3)
    assert deep["properties"]["b"]["properties"]["c"]["type"] == ["string", "null"]


def test_long_names_are_cut_with_a_hash_unique_and_stable() -> None:
    first = convert("long-names-3.1.json")
    second = convert("long-names-3.1.json")
    names = [t.name for t in first.tools]
    assert names == [t.name for t in second.tools]
    assert len(names) == len(set(names)) == 8
    assert all(re.match(TOOL_NAME_PATTERN, n) and len(n) <= 64 for n in names)
    assert names[0].startswith("list_all_repository_deployment") and len(names[0]) == 64
    assert names[2] != names[3] and names[2][:55] == names[3][:55]
    assert names[4] == "repos_get-by_id_v2_beta"
    assert names[5] == "delete_f_id_g"
    assert names[6:] == ["duplicate", "duplicate_2"]
    subset = convert("long-names-3.1.json", include=[first.operations[3].operation_id or ""])
    assert [t.name for t in subset.tools] == [names[3]]


def test_name_allocation_rules() -> None:
    assert shorten("a" * 64) == "a" * 64
    assert shorten("a" * 65) != shorten("a" * 66) and len(shorten("a" * 200)) == 64
    allocator = NameAllocator("my catalog!")
    assert allocator.allocate("get pets") == "my_catalog_get_pets"
    assert allocator.allocate("get/pets") == "my_catalog_get_pets_2"
    assert allocator.allocate("???") == "my_catalog_operation"
    long = NameAllocator()
    taken = [long.allocate("y" * 80) for _ in range(3)]
    assert len(set(taken)) == 3 and all(len(n) <= 64 for n in taken)
