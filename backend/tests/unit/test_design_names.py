"""The README maps the pipeline's design names to the code's, and the code has each name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"
MAPPED = {
    "WorkflowOrchestrator": ("dynamic_tools.selection.pipeline", "SingleShotPipeline"),
    "ToolRegistry": ("dynamic_tools.tools.registry", "ToolRegistry.get_multiple"),
    "PromptService": ("dynamic_tools.selection.llm", "LLMClient"),
    "prompt_mcp": ("dynamic_tools.selection.llm", "LLMClient.choose"),
    "prompt_normal": ("dynamic_tools.selection.llm", "LLMClient.complete"),
    "HTTPRequestSpec": ("dynamic_tools.http.request_builder", "PreparedRequest.http_spec"),
    "HTTPClientService": ("dynamic_tools.http.invoker", "ToolInvoker"),
    "HTTPResponseSpec": ("dynamic_tools.http.sender", "HttpResult.to_dict"),
}


def test_every_design_name_has_a_row_naming_code_that_exists() -> None:
    text = README.read_text()
    section = text.split("### The pipeline's design names", 1)[1].split("\n## ", 1)[0]
    rows = {
        re.findall(r"`([^`]+)`", line.split("|")[1])[0]: line
        for line in section.splitlines()
        if line.startswith("| `")
    }
    for design, (module, dotted) in MAPPED.items():
        assert design in rows, f"the README has no row for {design}"
        head = dotted.split(".")[0]
        assert f"`{head}" in rows[design], f"the row of {design} does not name {head}"
        found: object = importlib.import_module(module)
        for part in dotted.split("."):
            found = getattr(found, part)  # AttributeError: the README names what is not there
