"""The README's "Pointing it at an LLM" recipes, run against servers that answer as those do.

Each recipe block (llama.cpp, vLLM, Ollama) ends in a ``... make run`` line of settings; the
app is started with exactly those settings, its ``OPENAI_BASE_URL`` pointed at the scripted
server of that kind (``tests/support/llm_servers.py``). The probe must find the way the
recipe's comment says ("asked by ..."), ``/readyz`` must show it, and a travel request must
select the expected call through it.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.demo.travel_data import OPERATIONS
from tests.conftest import EXAMPLES, REPO
from tests.integration.llm.test_real_server_shapes import present, settings_for
from tests.support.llm_servers import ProfileName, profile, running, travel_cases
from tests.support.servers import serve

SECTION = re.compile(r"^## Pointing it at an LLM\n(.*?)^## ", re.S | re.M)
BLOCK = re.compile(r"```bash\n(.*?)```", re.S)
ASKED_BY = {"named calls": "named", "required": "required", "response_format json_schema": (
    "json_schema"
)}  # fmt: skip
#: the recipe's first comment word → the scripted server that answers as that server does
KINDS: dict[str, ProfileName] = {
    "llama.cpp": "llama_cpp:default",
    "vLLM": "vllm",
    "Ollama": "ollama",
}


def recipes() -> dict[str, tuple[str, dict[str, str]]]:
    """Per server kind: the way the comment says it is asked by, and the settings it sets."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = SECTION.search(text)
    assert section, "the README has no 'Pointing it at an LLM' section"
    found: dict[str, tuple[str, dict[str, str]]] = {}
    for block in BLOCK.findall(section.group(1)):
        first = block.splitlines()[0]
        kind = next((k for k in KINDS if first.startswith(f"# {k} ")), None)
        if kind is None:
            continue
        way = re.search(r"asked by ([a-z_ ]+?)(?: under a grammar)?\)", first)
        assert way, f"the {kind} recipe does not say how it is asked: {first}"
        run = next(line for line in block.splitlines() if line.rstrip().endswith("make run"))
        settings = dict(
            word.split("=", 1) for word in shlex.split(run) if re.match(r"^[A-Z_]+=", word)
        )
        found[kind] = (ASKED_BY[way.group(1).strip()], settings)
    assert sorted(found) == sorted(KINDS), found
    return found


RECIPES = recipes()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_readme_recipe_probes_to_its_way_and_selects_the_call(kind: str, tmp_path: Path) -> None:
    method, env = RECIPES[kind]
    root = tmp_path
    shutil.copytree(EXAMPLES / "tools", root / "registry" / "tools")
    case = next(c for c in travel_cases() if c.id == "book-hotel")
    with running(profile(KINDS[kind], model=env["LLM_MODEL"])) as llm:
        overrides: dict[str, Any] = {
            name.lower(): value for name, value in env.items() if name != "OPENAI_BASE_URL"
        }
        overrides["llm_capabilities"] = "detect"  # the recipe's: probed, as a user's would be
        settings = settings_for(root, llm, **overrides)
        assert settings.openai_base_url == llm.base_url
        with serve(create_app(settings), port=settings.port) as url:
            answer = httpx.post(
                f"{url}/workflow",
                json={"user_instructions": case.instructions, "tool_ids": list(OPERATIONS)},
                timeout=60,
            ).json()
            ready = httpx.get(f"{url}/readyz", timeout=10).json()["checks"]["llm"]
    assert ready["source"] == "probe", ready
    assert ready["method"] == method, ready
    assert answer["status"] == "success", answer.get("error")
    assert (answer["selected_tool"], present(answer["arguments"])) == (case.tool, case.arguments)
    # every request the product sent was bounded and named the recipe's model
    assert all(body.get("max_tokens") for body in llm.requests)
    assert {body.get("model") for body in llm.requests} == {env["LLM_MODEL"]}
