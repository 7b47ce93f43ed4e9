from dynamic_tools.selection.prepared import PreparedTools
from dynamic_tools.tools.models import ToolConfig

DATA = {
    "name": "get_item",
    "description": "Get an item",
    "api": {"method": "GET", "base_url": "https://x.example", "path": "/items/{id}"},
    "parameters": {"id": {"type": "string", "in": "path", "required": True}},
}


def test_prepared_data_is_reused_per_object_and_rebuilt_for_a_new_one() -> None:
    cache = PreparedTools()
    tool = ToolConfig.model_validate(DATA)
    first = cache.get(tool)
    assert cache.get(tool) is first
    assert first.function.name == "get_item" and first.context.startswith("Tool: get_item")
    changed = ToolConfig.model_validate({**DATA, "description": "Get one item (v2)"})
    second = cache.get(changed)
    assert second is not first and "v2" in second.context
