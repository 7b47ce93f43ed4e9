"""The enriched step prompt: placeholders resolved with their JSON types, tools, inputs,
criteria, outputs, and the report instructions."""

from __future__ import annotations

from pathlib import Path

from dynamic_tools.markdown.parser import parse_markdown
from dynamic_tools.markdown.prompts import render_value, resolve, step_prompt

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_values_are_inserted_as_text_or_compact_json() -> None:
    variables = {"NAME": "Ada", "COUNT": 3, "OK": True, "IDS": ["a", "b"], "NOTHING": None}
    text = r"[NAME] [COUNT] [OK] [IDS] [NOTHING] [UNKNOWN] \[NAME] [NAME](http://x) [name]"
    assert resolve(text, variables) == (
        """Ada 3 true ["a","b"] null [UNKNOWN] [NAME] [NAME](http://x) [name]"""
    )
    assert render_value({"é": 1.5}) == '{"é":1.5}'


def test_the_prompt_carries_everything_the_model_needs_for_the_step() -> None:
    workflow = parse_markdown((FIXTURES / "full.md").read_text())
    variables = {"THING": 7, "OTHER": "other value"}
    prompt = step_prompt(workflow, workflow.steps[0], variables, session_id="S-1", attempt=1)
    lines = prompt.splitlines()
    assert lines[0] == "## Step 1 of 4 of workflow 'Full format': First step"
    assert lines[1] == "step_number: 0"
    assert "Do 7 with [NOT_A_VARIABLE] and [a link](https://example.org)" in prompt
    assert "Second paragraph mentioning 7 again and other value." in prompt
    assert "Call the tool `tool_one`." in prompt
    assert "- THING = 7 — the thing" in lines
    assert '- OTHER = "other value"' in lines
    assert "### Success criteria (3): evaluate each one" in lines
    assert "2. the list has more than 7 items" in lines
    assert "- result.items[0].name → report as `FIRST_NAME`" in lines
    assert '  "session_id": "S-1",' in lines
    assert '      "assertion": "the list has more than 7 items",' in lines
    assert '    "TOTAL": "<value of the total>"' in lines
    assert "attempt" not in lines[0]

    second = step_prompt(workflow, workflow.steps[1], {}, session_id="S-1", attempt=3)
    assert second.splitlines()[0].endswith("Second step (attempt 3)")
    assert "1. `tool_two`" in second and "2. `tool_three`" in second
    assert "Use [RESULT_ID] and [TOTAL]." in second  # unknown values stay visible
    assert "output_variables" not in second  # the step declares no outputs
