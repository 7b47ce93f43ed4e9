"""The markdown workflow parser: the whole format on one document, and every format error with
the line it names and its suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynamic_tools.errors import InvalidInputError, MarkdownWorkflowError
from dynamic_tools.markdown.errors import ERROR_TYPES
from dynamic_tools.markdown.parser import MAX_STEPS, parse_markdown

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def parse_fixture(name: str) -> MarkdownWorkflowError:
    path = FIXTURES / "invalid" / name
    with pytest.raises(MarkdownWorkflowError) as caught:
        parse_markdown(path.read_text(encoding="utf-8"), source=name)
    return caught.value


def test_every_part_of_the_format_is_read_with_its_line() -> None:
    workflow = parse_markdown((FIXTURES / "full.md").read_text(), source="full.md")
    assert workflow.title == "Full format"
    assert workflow.source == "full.md"
    assert workflow.description.startswith("The preamble: what the workflow is for.\nIt has two")
    assert [s.name for s in workflow.steps] == [
        "First step",
        "Second step",
        "Third step",
        "Fourth step",
    ]
    assert [s.number for s in workflow.steps] == [0, 1, 2, 3]

    first = workflow.steps[0]
    assert (first.line, first.description_line, first.section) == (13, 14, "Phase one")
    assert first.description.splitlines()[0] == (
        r"Do [THING] with \[NOT_A_VARIABLE] and [a link](https://example.org) and [LINK](x)."
    )
    assert [(t.name, t.line) for t in first.tools] == [("tool_one", 20)]
    assert [(i.name, i.description, i.line) for i in first.inputs] == [
        ("THING", "the thing", 23),
        ("OTHER", "", 24),
    ]
    assert [(o.source, o.variable, o.line) for o in first.outputs] == [
        ("result.id", "RESULT_ID", 27),
        ("result.items[0].name", "FIRST_NAME", 28),
        ("the total", "TOTAL", 29),
    ]
    assert [(a.text, a.line) for a in first.assertions] == [
        ("result.id is not empty", 32),
        ("the list has more than [THING] items", 33),
        ("numbered items work too", 35),
    ]
    # Placeholders: first mention wins; escaped brackets and links are not variables.
    assert [(u.name, u.line) for u in first.reads] == [("THING", 15), ("OTHER", 17)]

    second = workflow.steps[1]
    assert (second.line, second.section) == (41, "Phase two")  # '#### ' and lower-case words
    assert second.tool_names == ["tool_two", "tool_three"]  # text after a name is a comment
    assert [a.text for a in second.assertions] == ["it worked"]  # ASSERTIONS: is ASSERT:
    assert [u.name for u in second.reads] == ["RESULT_ID", "TOTAL"]

    third = workflow.steps[2]
    assert third.tool_names == ["tool_one", "tool_four"]  # TOOLS: a, b on the heading
    assert third.inputs == []  # "(optional)" after INPUTS: is allowed

    assert workflow.tool_names == ["tool_one", "tool_two", "tool_three", "tool_four"]
    # LATE is read by step 2 before step 3 sets it: the caller must give it at load.
    assert [(u.name, u.line) for u in workflow.required_inputs] == [
        ("THING", 15),
        ("OTHER", 17),
        ("LATE", 53),
    ]


def test_a_byte_order_mark_and_windows_line_ends_change_nothing() -> None:
    text = (FIXTURES / "full.md").read_text()
    assert parse_markdown("\ufeff" + text.replace("\n", "\r\n")) == parse_markdown(text)


def test_a_parsed_workflow_survives_a_json_round_trip() -> None:
    workflow = parse_markdown((FIXTURES / "full.md").read_text())
    again = type(workflow).model_validate_json(workflow.model_dump_json())
    assert again == workflow


@pytest.mark.parametrize(
    ("fixture", "error_type", "line", "message", "suggestion"),
    [
        ("empty_workflow.md", "empty_workflow", 1, "no workflow step (6 lines", "Add at least"),
        ("missing_tool_spec.md", "missing_tool_spec", 9, "'Forgot the tool' has no", "TOOL:"),
        ("empty_tools_list.md", "missing_tool_spec", 1, "'Empty list' has no", "(line 1)"),
        ("no_description.md", "invalid_format", 4, "needs its description", "```"),
        ("unclosed_fence.md", "invalid_format", 2, "never closed", "Close it with ```"),
        ("output_without_arrow.md", "invalid_format", 8, "has no '→ VARIABLE'", "→ FLIGHT_ID"),
        ("lowercase_variable.md", "invalid_format", 8, "'flight date'", "FLIGHT_DATE"),
        ("section_outside_step.md", "invalid_format", 3, "ASSERT section is not under", "under"),
        (
            "section_after_foreign_heading.md",
            "invalid_format",
            9,
            "the heading at line 7 ended step 'Interrupted'",
            "no other heading between",
        ),
        ("duplicate_step.md", "invalid_format", 7, "first is at line 1", "its own name"),
        ("stray_text.md", "invalid_format", 5, "outside its description", "description block"),
        ("not_a_list_item.md", "invalid_format", 8, "expected a '- ' list item", "'- '"),
        ("bad_tool_name.md", "invalid_format", 7, "is not a tool name", "search_flights"),
        ("second_description.md", "invalid_format", 6, "a second fenced block", "one fenced"),
        ("duplicate_section.md", "invalid_format", 8, "first is at line 5", "Merge them"),
        ("text_after_heading.md", "invalid_format", 6, "'it works'", "'- ' list"),
        ("nameless_step.md", "invalid_format", 3, "without a name", "Search flights"),
        ("empty_description.md", "invalid_format", 2, "is empty", "must achieve"),
    ],
)
def test_each_format_error_names_its_line_and_suggests_a_fix(
    fixture: str, error_type: str, line: int, message: str, suggestion: str
) -> None:
    error = parse_fixture(fixture)
    assert error.error_type == error_type
    assert error.code == error_type
    assert error.line == line
    assert message in error.message
    assert suggestion in error.suggestion
    if error_type != "empty_workflow":
        assert error.message.startswith(f"line {line}: ")
    body = error.to_dict()
    assert (body["error_code"], body["error_type"], body["line"]) == (error_type, error_type, line)
    assert body["suggestion"] == error.suggestion
    assert isinstance(error, InvalidInputError)


def test_an_empty_document_is_an_empty_workflow() -> None:
    with pytest.raises(MarkdownWorkflowError) as caught:
        parse_markdown("", source="blank.md")
    assert caught.value.error_type == "empty_workflow"
    assert "'blank.md'" in caught.value.message


def test_a_heading_inside_a_fenced_block_is_not_a_step() -> None:
    text = "# T\n\n````\n### 🔧 WORKFLOW STEP: fake\n```\nx\n```\n````\n"
    with pytest.raises(MarkdownWorkflowError) as caught:
        parse_markdown(text)
    assert caught.value.error_type == "empty_workflow"


def test_more_steps_than_the_limit_are_refused_at_the_first_extra_heading() -> None:
    step = "### 🔧 WORKFLOW STEP: s{n}\n```\nx\n```\n### 🛠️ TOOL: t\n"
    text = "".join(step.format(n=n) for n in range(MAX_STEPS + 1))
    with pytest.raises(MarkdownWorkflowError) as caught:
        parse_markdown(text)
    assert caught.value.error_type == "invalid_format"
    assert caught.value.line == MAX_STEPS * 5 + 1
    assert f"more than {MAX_STEPS} steps" in caught.value.message


def test_the_error_types_are_the_seeds_seven_and_two_more() -> None:
    assert set(ERROR_TYPES) == {
        "file_not_found",
        "invalid_format",
        "empty_workflow",
        "missing_tool_spec",
        "variable_missing",
        "step_out_of_order",
        "no_workflow_loaded",
        "unknown_tool",
        "invalid_request",
    }


BARE = """\
# Book a flight

### 🔧 WORKFLOW STEP: Search flights
```
Search the flights from [ORIGIN] to [DESTINATION].
```
🛠️ TOOL: search_flights

📥 INPUTS:
- ORIGIN: departure airport
- DESTINATION: arrival airport

📤 OUTPUTS:
- result[0].id → FLIGHT_ID

✅ ASSERT:
- At least one flight came back

### 🔧 WORKFLOW STEP: Check seats
```
Check [FLIGHT_ID].
```
**🛠️ TOOLS:** check_availability, search_flights
**📥 INPUTS:**
- FLIGHT_ID: the flight
"""


def test_sections_written_as_bare_lines_read_like_headings() -> None:
    workflow = parse_markdown(BARE, source="bare.md")
    first, second = workflow.steps
    assert [(t.name, t.line) for t in first.tools] == [("search_flights", 7)]
    assert [i.name for i in first.inputs] == ["ORIGIN", "DESTINATION"]
    assert [(o.source, o.variable) for o in first.outputs] == [("result[0].id", "FLIGHT_ID")]
    assert [a.text for a in first.assertions] == ["At least one flight came back"]
    assert [t.name for t in second.tools] == ["check_availability", "search_flights"]
    assert [i.name for i in second.inputs] == ["FLIGHT_ID"]
    headings = BARE.replace("🛠️ TOOL:", "### 🛠️ TOOL:").replace("📥 INPUTS:\n-", "### 📥 INPUTS:\n-")
    assert parse_markdown(headings, source="h.md").steps[0].tools == first.tools


def test_a_bare_section_line_before_any_step_is_prose() -> None:
    text = "# T\n\nInputs: whatever the user says.\n\n" + BARE.split("\n", 2)[2]
    workflow = parse_markdown(text, source="prose.md")
    assert "Inputs: whatever the user says." in workflow.description
