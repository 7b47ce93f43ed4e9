"""The parsed form of a markdown workflow: steps with their tools, inputs, outputs, assertions.

Every element keeps the 1-based line it was written on, so errors raised later (a missing
variable at step 3, an unknown tool) can point at the line to change. The models are frozen and
JSON-serialisable: a session stores the parsed workflow as it was loaded, so a later edit of the
file never changes a run in progress.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from dynamic_tools.lazy_model import LazyModel

VARIABLE_PATTERN = r"[A-Z][A-Z0-9_]*"
"""Variable names: UPPER_SNAKE_CASE, as written in ``[VARIABLE]`` placeholders."""


class _Frozen(LazyModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolRef(_Frozen):
    """A tool named in a step's ``🛠️ TOOL:`` / ``🛠️ TOOLS:`` section."""

    name: str
    line: int


class InputSpec(_Frozen):
    """An ``📥 INPUTS:`` entry: a variable the step needs, and what it is."""

    name: str
    description: str = ""
    line: int


class OutputSpec(_Frozen):
    """An ``📤 OUTPUTS:`` entry: where to find a value (``source``) and the variable it sets."""

    source: str
    variable: str
    line: int


class AssertionSpec(_Frozen):
    """An ``✅ ASSERT:`` entry: a success criterion the model evaluates."""

    text: str
    line: int


class VariableUse(_Frozen):
    """A variable a step reads: a ``[PLACEHOLDER]`` or an input, where it is first mentioned."""

    name: str
    line: int


class WorkflowStep(_Frozen):
    """One ``### 🔧 WORKFLOW STEP:`` section."""

    number: int = Field(description="0-based position; the step_number of report_step_result.")
    name: str
    line: int = Field(description="Line of the step's heading.")
    section: str = Field(default="", description="The nearest '## ' heading above the step.")
    description: str
    description_line: int
    tools: list[ToolRef]
    inputs: list[InputSpec] = []
    outputs: list[OutputSpec] = []
    assertions: list[AssertionSpec] = []
    reads: list[VariableUse] = Field(
        default=[], description="Every variable the step needs: inputs and placeholders."
    )

    @property
    def tool_names(self) -> list[str]:
        """The tool names, in the order written."""
        return [tool.name for tool in self.tools]

    @property
    def output_variables(self) -> list[str]:
        """The variables this step sets when it passes."""
        return [output.variable for output in self.outputs]


class MarkdownWorkflow(_Frozen):
    """A parsed markdown workflow."""

    title: str = Field(default="", description="The first '# ' heading, if any.")
    description: str = Field(default="", description="Prose between the title and step 1.")
    source: str = Field(default="", description="The file it came from, or 'content'.")
    steps: list[WorkflowStep]
    required_inputs: list[VariableUse] = Field(
        default=[],
        description="Variables read before any step sets them: they must be given at load.",
    )

    @property
    def tool_names(self) -> list[str]:
        """Every tool the workflow names, once each, in order of first use."""
        return list(dict.fromkeys(name for step in self.steps for name in step.tool_names))
