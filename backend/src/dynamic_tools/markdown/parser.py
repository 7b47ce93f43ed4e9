r"""Parse the markdown workflow format (``docs/markdown-workflows.md``): pure, text in, model out.

The document is read line by line, tracking fenced blocks, so a heading inside a code block is
never taken for a step. Rules, each enforced with an error naming the line:

- A step starts at a heading ``🔧 WORKFLOW STEP: <name>`` (any level; the emoji is optional,
  the words are not case-sensitive). Names are unique.
- The first thing after a step heading (blank lines aside) is its description, a fenced block
  (```` ``` ```` or ``~~~``). Text between the description and the sections is refused: the
  model only ever sees the description, so nothing written for it may sit elsewhere.
- Then, in any order, at most once each: ``🛠️ TOOL: <name>`` or ``🛠️ TOOLS:`` (a list, or
  names separated by commas on the heading), ``📥 INPUTS:``, ``📤 OUTPUTS:``, ``✅ ASSERT:``.
  A section is a heading (``### 🛠️ TOOL: x``) or a line of its own inside the step
  (``🛠️ TOOL: x``, also in bold), as the format's original examples write it.
  A list section holds ``-``, ``*``, ``+`` or ``1.`` items; an indented line continues an item.
- Any other heading ends the step. A ``# `` heading before the first step is the title, the
  prose before the first step is the workflow's description, ``## `` headings name the section
  of the steps that follow; other prose between steps is ignored.
- ``[VARIABLE]`` (upper-case letters, digits, ``_``) in a description or an assertion is a
  placeholder; ``\[`` writes a literal bracket; ``[TEXT](url)`` is a link, not a placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dynamic_tools.markdown import errors
from dynamic_tools.markdown.models import (
    VARIABLE_PATTERN,
    AssertionSpec,
    InputSpec,
    MarkdownWorkflow,
    OutputSpec,
    ToolRef,
    VariableUse,
    WorkflowStep,
)

MAX_STEPS = 200

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_EMOJI = r"(?:[^\w\s]+\s*)?"
_STEP = re.compile(rf"^{_EMOJI}WORKFLOW\s+STEP\s*:\s*(.*)$", re.IGNORECASE)
_SECTION = re.compile(
    rf"^{_EMOJI}(TOOLS|TOOL|INPUTS|OUTPUTS|ASSERTIONS|ASSERT)\s*:\s*(.*)$", re.IGNORECASE
)
_BOLD = re.compile(r"\*\*|__")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_VARIABLE = re.compile(rf"^{VARIABLE_PATTERN}$")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_PLACEHOLDER = re.compile(rf"(?<!\\)\[({VARIABLE_PATTERN})\](?!\()")
_ARROW = re.compile(r"\s*(?:→|->|=>)\s*")
_OPTIONAL = {"", "(optional)"}


@dataclass
class _Item:
    text: str
    line: int


@dataclass
class _Step:
    name: str
    line: int
    section: str
    description: str | None = None
    description_line: int = 0
    lists: dict[str, list[_Item]] = field(default_factory=dict)
    list_lines: dict[str, int] = field(default_factory=dict)


def parse_markdown(text: str, *, source: str = "content") -> MarkdownWorkflow:
    """Parse a markdown workflow; :class:`MarkdownWorkflowError` names the first problem's line."""
    return _Parser(text.removeprefix("\ufeff"), source).parse()


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source
        self.title = ""
        self.preamble: list[str] = []
        self.section = ""
        self.steps: list[_Step] = []
        self.current: _Step | None = None
        self.list_kind: str | None = None  # the list section being read, in self.current
        self.ended_by: int | None = None  # line of the heading that closed the last step

    # --- reading --------------------------------------------------------------------------
    def parse(self) -> MarkdownWorkflow:
        index = 0
        while index < len(self.lines):
            line = self.lines[index]
            if _FENCE.match(line):
                index = self._fenced(index)
                continue
            heading = _HEADING.match(line)
            bare = None if heading else self._bare_section(line)
            if heading:
                self._heading(len(heading.group(1)), heading.group(2), index + 1)
            elif bare:
                self._section(bare.group(1).upper(), bare.group(2).strip(), index + 1)
            else:
                self._text(line, index + 1)
            index += 1
        self._close_step(len(self.lines))
        if not self.steps:
            raise errors.empty_workflow(self.source, len(self.lines))
        return self._build()

    def _bare_section(self, line: str) -> re.Match[str] | None:
        """A section written as a line of its own (``🛠️ TOOL: search_flights``), in a step.

        Only inside a step that no other heading has ended, so prose before the steps that
        happens to start with "Inputs:" stays prose. Bold markers around it are ignored.
        """
        if self.current is None or self.ended_by is not None:
            return None
        return _SECTION.match(_BOLD.sub("", line.strip()))

    def _fenced(self, index: int) -> int:
        """Read a fenced block from ``index``; returns the index after its closing fence."""
        opening = _FENCE.match(self.lines[index])
        assert opening is not None
        marker = opening.group(1)
        body: list[str] = []
        end = index + 1
        while end < len(self.lines):
            closing = _FENCE.match(self.lines[end])
            if (
                closing
                and closing.group(1)[0] == marker[0]
                and len(closing.group(1)) >= len(marker)
            ):
                break
            body.append(self.lines[end])
            end += 1
        else:
            raise errors.invalid_format(
                "this fenced block is never closed", index + 1, hint=f"Close it with {marker}."
            )
        step = self.current
        if step is not None and step.description is None:
            content = "\n".join(body)
            if not content.strip():
                raise errors.invalid_format(
                    f"the description of step '{step.name}' is empty",
                    index + 1,
                    hint="Say in the fenced block what the step must achieve.",
                )
            step.description, step.description_line = content, index + 1  # stripped at build
        elif step is not None and self.ended_by is None:
            where = f"the {self.list_kind} section of " if self.list_kind else ""
            raise errors.invalid_format(
                f"a second fenced block in {where}step '{step.name}' (line {step.line})",
                index + 1,
                hint="A step has one fenced block, its description, right after its heading.",
            )
        elif not self.steps and step is None:
            self.preamble.extend(body)
        return end + 1

    def _heading(self, level: int, text: str, line: int) -> None:
        step_match = _STEP.match(text)
        if step_match:
            self._close_step(line)
            name = step_match.group(1).strip()
            if not name:
                raise errors.invalid_format(
                    "a step heading without a name",
                    line,
                    hint="Name the step: '### 🔧 WORKFLOW STEP: Search flights'.",
                )
            duplicate = next((s for s in self.steps if s.name == name), None)
            if duplicate is not None:
                raise errors.invalid_format(
                    f"a second step named '{name}' (the first is at line {duplicate.line})",
                    line,
                    hint="Give every step its own name.",
                )
            if len(self.steps) >= MAX_STEPS:
                raise errors.invalid_format(f"more than {MAX_STEPS} steps", line)
            self.current, self.list_kind, self.ended_by = (
                _Step(name, line, self.section),
                None,
                None,
            )
            return
        section_match = _SECTION.match(text)
        if section_match:
            self._section(section_match.group(1).upper(), section_match.group(2).strip(), line)
            return
        step = self.current
        if step is not None and step.description is None:
            self._no_description(step, line)
        if step is not None:
            self.ended_by = self.ended_by or line
            self.list_kind = None
        if level == 1 and not self.title and not self.steps and step is None:
            self.title = text.strip()
        elif level <= 2:
            self.section = text.strip()
        elif not self.steps and step is None:
            self.preamble.append(text)

    def _section(self, kind: str, rest: str, line: int) -> None:
        kind = {"TOOL": "TOOLS", "ASSERTIONS": "ASSERT"}.get(kind, kind)
        step = self.current
        if step is None or self.ended_by is not None:
            after = (
                f"; the heading at line {self.ended_by} ended step '{step.name}'"
                if (step is not None and self.ended_by is not None)
                else ""
            )
            raise errors.invalid_format(
                f"the {kind} section is not under a WORKFLOW STEP heading{after}",
                line,
                hint="Put each section right under its step, with no other heading between.",
            )
        if step.description is None:
            self._no_description(step, line)
        if kind in step.lists:
            raise errors.invalid_format(
                f"a second {kind} section in step '{step.name}' (the first is at line "
                f"{step.list_lines[kind]})",
                line,
                hint="Merge them into one list.",
            )
        step.lists[kind], step.list_lines[kind] = [], line
        self.list_kind = kind
        if kind == "TOOLS":
            for name in (part.strip() for part in rest.split(",")):
                if name:
                    step.lists[kind].append(_Item(name, line))
        elif rest.lower() not in _OPTIONAL:
            raise errors.invalid_format(
                f"text after the {kind} heading: '{rest}'",
                line,
                hint=f"Write the {kind} entries as a '- ' list under the heading.",
            )

    def _text(self, line_text: str, line: int) -> None:
        step = self.current
        blank = not line_text.strip()
        if step is None or self.ended_by is not None:
            if not self.steps and step is None:
                self.preamble.append(line_text.strip())
            return
        if blank:
            return
        if step.description is None:
            self._no_description(step, line)
        if self.list_kind is None:
            raise errors.invalid_format(
                f"text in step '{step.name}' outside its description and sections",
                line,
                hint="Move it into the step's fenced description block (the model only sees "
                "that), or under a heading that is not part of a step.",
            )
        items = step.lists[self.list_kind]
        item = _ITEM.match(line_text)
        if item:
            items.append(_Item(item.group(1).strip(), line))
        elif line_text[:1] in (" ", "\t") and items:
            items[-1].text = f"{items[-1].text} {line_text.strip()}"
        else:
            raise errors.invalid_format(
                f"expected a '- ' list item in the {self.list_kind} section of step '{step.name}'",
                line,
                hint="Start each entry with '- ', or indent a line to continue the entry above; "
                "notes for humans go under a heading of their own, after the step.",
            )

    def _no_description(self, step: _Step, line: int) -> None:
        raise errors.invalid_format(
            f"step '{step.name}' (line {step.line}) needs its description in a fenced block "
            "right after its heading",
            line,
            hint="Write the description between ``` lines directly under the step heading.",
        )

    def _close_step(self, line: int) -> None:
        step = self.current
        if step is None:
            return
        if step.description is None:
            self._no_description(step, line)
        if not step.lists.get("TOOLS"):
            raise errors.missing_tool_spec(step.name, step.line)
        self.steps.append(step)
        self.current = None

    # --- building ---------------------------------------------------------------------------
    def _build(self) -> MarkdownWorkflow:
        steps = [_build_step(number, step) for number, step in enumerate(self.steps)]
        produced: set[str] = set()
        required: dict[str, VariableUse] = {}
        for step in steps:
            for use in step.reads:
                if use.name not in produced and use.name not in required:
                    required[use.name] = use
            produced.update(step.output_variables)
        return MarkdownWorkflow(
            title=self.title,
            description=re.sub(r"\n{3,}", "\n\n", "\n".join(self.preamble)).strip(),
            source=self.source,
            steps=steps,
            required_inputs=list(required.values()),
        )


def _build_step(number: int, step: _Step) -> WorkflowStep:
    assert step.description is not None
    tools = [ToolRef(name=_tool_name(item, step), line=item.line) for item in step.lists["TOOLS"]]
    inputs = [_input(item, step) for item in step.lists.get("INPUTS", [])]
    outputs = [_output(item, step) for item in step.lists.get("OUTPUTS", [])]
    assertions = [
        AssertionSpec(text=item.text, line=item.line) for item in step.lists.get("ASSERT", [])
    ]
    reads: dict[str, int] = {}
    for spec in inputs:
        reads.setdefault(spec.name, spec.line)
    for offset, text in enumerate(step.description.split("\n"), start=1):
        for name in _PLACEHOLDER.findall(text):
            line = step.description_line + offset
            reads[name] = min(reads.get(name, line), line)
    for assertion in assertions:
        for name in _PLACEHOLDER.findall(assertion.text):
            reads.setdefault(name, assertion.line)
    return WorkflowStep(
        number=number,
        name=step.name,
        line=step.line,
        section=step.section,
        description=step.description.strip(),
        description_line=step.description_line,
        tools=tools,
        inputs=inputs,
        outputs=outputs,
        assertions=assertions,
        reads=[
            VariableUse(name=n, line=ln) for n, ln in sorted(reads.items(), key=lambda kv: kv[1])
        ],
    )


def _tool_name(item: _Item, step: _Step) -> str:
    name = re.split(r"[\s:]", item.text.strip(), maxsplit=1)[0].strip("`")
    if not _TOOL_NAME.match(name):
        raise errors.invalid_format(
            f"'{item.text}' in step '{step.name}' is not a tool name",
            item.line,
            hint="A tool name is 1-128 letters, digits, '_', '.' or '-', e.g. search_flights.",
        )
    return name


def _variable(raw: str, item: _Item, step: _Step, kind: str) -> str:
    name = raw.strip().strip("`").strip("[]").strip()
    if not _VARIABLE.match(name):
        upper = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() or "FLIGHT_ID"
        raise errors.invalid_format(
            f"'{name}' in the {kind} of step '{step.name}' is not a variable name",
            item.line,
            hint=f"Variables are UPPER_SNAKE_CASE, as used in [PLACEHOLDERS], e.g. {upper}.",
        )
    return name


def _input(item: _Item, step: _Step) -> InputSpec:
    name, _, description = item.text.partition(":")
    return InputSpec(
        name=_variable(name, item, step, "INPUTS"), description=description.strip(), line=item.line
    )


def _output(item: _Item, step: _Step) -> OutputSpec:
    parts = _ARROW.split(item.text, maxsplit=1)
    if len(parts) != 2 or not parts[0].strip():
        raise errors.invalid_format(
            f"the output '{item.text}' of step '{step.name}' has no '→ VARIABLE'",
            item.line,
            hint="Write outputs as '- <where the value is> → VARIABLE_NAME', e.g. "
            "'- result[0].id → FLIGHT_ID' ('->' works too).",
        )
    return OutputSpec(
        source=parts[0].strip(),
        variable=_variable(parts[1], item, step, "OUTPUTS"),
        line=item.line,
    )
