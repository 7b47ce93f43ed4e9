"""Every REST route documents its answer; the /docs example of POST /workflow is runnable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from dynamic_tools.api.app import create_app
from dynamic_tools.selection.models import WorkflowRequest
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES

#: Routes whose 2xx answer is still an untyped object: none. A new route must come with a
#: response model.
NOT_YET_TYPED: set[str] = set()
NOT_JSON = {"GET /metrics"}  # Prometheus text


def untyped(schema: dict[str, Any] | None) -> bool:
    if not schema:
        return True
    if "$ref" in schema or schema.get("properties") or "anyOf" in schema:
        return False
    return schema.get("type") == "object" and schema.get("additionalProperties") is True


def test_every_route_documents_its_answer(make_settings: Callable[..., Settings]) -> None:
    document = create_app(make_settings()).openapi()
    found = set()
    for path, item in document["paths"].items():
        if path.startswith("/demo/"):
            continue
        for method, operation in item.items():
            name = f"{method.upper()} {path}"
            for code, response in operation["responses"].items():
                if not code.startswith("2") or code == "204" or name in NOT_JSON:
                    continue
                schemas = [c.get("schema") for c in (response.get("content") or {}).values()]
                if not schemas or any(untyped(s) for s in schemas):
                    found.add(name)
    assert found == NOT_YET_TYPED, (
        f"newly untyped: {sorted(found - NOT_YET_TYPED)}; "
        f"now typed (remove from the list): {sorted(NOT_YET_TYPED - found)}"
    )


def test_the_post_workflow_example_uses_tools_of_the_travel_example(
    make_settings: Callable[..., Settings],
) -> None:
    document = create_app(make_settings()).openapi()
    request = document["components"]["schemas"]["WorkflowRequest"]
    (example,) = request["examples"]
    WorkflowRequest.model_validate(example)
    travel = {
        yaml.safe_load(path.read_text())["name"] for path in (EXAMPLES / "tools").glob("*.yaml")
    }
    assert set(example["tool_ids"]) <= travel
