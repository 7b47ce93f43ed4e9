"""The real Petstore in Swagger 2.0, OpenAPI 3.0 and 3.1 converts to the same tools."""

import pytest

from dynamic_tools.http.request_builder import build_request
from dynamic_tools.tools.models import TOOL_NAME_PATTERN
from tests.unit.tools.openapi.conftest import convert, load

VERSIONS = ["petstore-2.0.json", "petstore-3.0.json", "petstore-3.1.json"]
EXPECTED_TOOLS = {
    "addPet", "updatePet", "findPetsByStatus", "findPetsByTags", "getPetById",
    "updatePetWithForm", "deletePet", "uploadFile", "getInventory", "placeOrder",
    "getOrderById", "deleteOrder", "createUser", "loginUser", "logoutUser",
    "getUserByName", "updateUser", "deleteUser",
}  # fmt: skip


@pytest.mark.parametrize("name", VERSIONS)
def test_every_representable_operation_becomes_a_tool(name: str) -> None:
    result = convert(name, catalog="petstore")
    assert result.valid and result.operation_count == 20
    assert {t.name for t in result.tools} == EXPECTED_TOOLS
    skipped = {w.path for w in result.warnings if w.message.startswith("skipped")}
    assert skipped == {
        "#/paths/~1user~1createWithArray/post",
        "#/paths/~1user~1createWithList/post",
    }
    assert all(w.rule == "non_object_body" for w in result.warnings if w.path in skipped)
    assert [o.tool for o in result.operations] == [t.name for t in result.tools]


@pytest.mark.parametrize("name", VERSIONS)
def test_parameters_keep_place_schema_and_required(name: str) -> None:
    tools = {t.name: t for t in convert(name, catalog="petstore").tools}
    status = tools["findPetsByStatus"].parameters["status"]
    assert status.location == "query" and status.required
    assert status.schema_["type"] == "array"
    assert set(status.schema_["items"]["enum"]) == {"available", "pending", "sold"}
    pet_id = tools["getPetById"].parameters["petId"]
    assert pet_id.location == "path" and pet_id.required
    assert pet_id.schema_["type"] == "integer" and pet_id.schema_["format"] == "int64"
    add = tools["addPet"]
    body = {n: p for n, p in add.parameters.items() if p.location == "body"}
    assert {"category", "name", "photoUrls", "tags", "status"} <= set(body) <= {"id", *body}
    pet = load(name).get("components", {}).get("schemas", load(name).get("definitions"))["Pet"]
    assert ("id" in body) is not pet["properties"]["id"].get("readOnly", False)
    assert body["name"].required and body["photoUrls"].required and not body["status"].required
    assert body["category"].schema_["properties"]["name"]["type"] == "string"  # $ref inlined
    assert tools["deletePet"].parameters["api_key"].location == "header"


@pytest.mark.parametrize("name", VERSIONS)
def test_endpoint_output_hints_annotations_and_auth(name: str) -> None:
    tools = {t.name: t for t in convert(name, catalog="pet-store").tools}
    get = tools["getPetById"]
    assert get.api.method == "GET" and get.api.path == "/pet/{petId}"
    assert get.api.base_url.endswith("petstore.swagger.io/v2")
    assert get.description == "Find pet by ID\n\nReturns a single pet"
    assert get.hints.category == "pet"
    assert get.output_schema is not None and "photoUrls" in get.output_schema["properties"]
    assert get.annotations.read_only is True and get.annotations.destructive is False
    assert tools["deletePet"].annotations.destructive is True
    assert get.auth.type == "api_key" and get.auth.location == "header"
    assert get.auth.name == "api_key" and get.auth.secret == "secret:PET_STORE_TOKEN"
    assert tools["addPet"].auth.type == "bearer"  # oauth2 → an access token
    assert tools["addPet"].auth.secret == "secret:PET_STORE_TOKEN"
    assert tools["loginUser"].auth.type == "none"


def test_form_and_multipart_bodies_become_body_fields() -> None:
    result = convert("petstore-3.0.json")
    tools = {t.name: t for t in result.tools}
    form = tools["updatePetWithForm"]
    assert form.api.content_type == "application/x-www-form-urlencoded"
    assert {n: p.location for n, p in form.parameters.items()} == {
        "petId": "path",
        "name": "body",
        "status": "body",
    }
    upload = tools["uploadFile"]
    assert upload.api.content_type == "multipart/form-data"
    assert upload.parameters["file"].schema_["format"] == "binary"
    assert not [w for w in result.warnings if w.rule == "unsupported_body"]


def test_a_body_property_named_like_a_path_parameter_is_dropped_with_a_warning() -> None:
    result = convert("petstore-3.1.json")
    update = next(t for t in result.tools if t.name == "updateUser")
    assert update.parameters["username"].location == "path"
    assert any(w.rule == "parameter_clash" and "username" in w.message for w in result.warnings)


def test_a_generated_tool_builds_a_real_request_with_the_secret_injected_late() -> None:
    tools = {t.name: t for t in convert("petstore-3.0.json", catalog="petstore").tools}
    request = build_request(
        tools["getPetById"], {"petId": 7}, secret=lambda name: {"PETSTORE_TOKEN": "s3cr3t"}[name]
    )
    assert request.url == "http://petstore.swagger.io/v2/pet/7"
    assert request.headers["api_key"] == "s3cr3t"
    assert request.http_spec()["headers"]["api_key"] == "***"
    order = build_request(tools["placeOrder"], {"petId": 1, "quantity": 2}, secret=lambda name: "t")
    assert order.method == "POST" and order.body == {"petId": 1, "quantity": 2}


def test_names_are_valid_and_a_prefix_applies_to_all() -> None:
    import re

    result = convert("petstore-2.0.json", prefix="pets")
    assert all(re.match(TOOL_NAME_PATTERN, t.name) for t in result.tools)
    assert all(t.name.startswith("pets_") for t in result.tools)


def test_include_selects_by_operation_id_tool_name_or_method_and_path() -> None:
    result = convert("petstore-3.0.json", include=["getPetById", "get /store/inventory"])
    assert [t.name for t in result.tools] == ["getPetById", "getInventory"]
    bad = convert("petstore-3.0.json", include=["getPetById", "noSuchThing"])
    assert [v.to_dict() for v in bad.violations] == [
        {
            "path": "include[1]",
            "rule": "unknown_operation",
            "message": "'noSuchThing' matches no operation (use an operationId, a tool name or "
            "'METHOD /path')",
        }
    ]


def test_base_url_override_replaces_the_servers_and_is_checked() -> None:
    result = convert("petstore-3.1.json", base_url="https://mock.example.org/api/")
    assert {t.api.base_url for t in result.tools} == {"https://mock.example.org/api"}
    bad = convert("petstore-3.1.json", base_url="ftp://x")
    assert bad.violations[0].path == "base_url" and bad.violations[0].rule == "invalid_base_url"
