"""Markdown workflows driven by the client LLM: parser, session state, prompts, tools.

What they are and how a client uses them: docs/markdown-workflows.md.

Framework-free: nothing here imports FastAPI, MCP or SQLAlchemy. The MCP adapter registers the
tool definitions of :mod:`~dynamic_tools.markdown.tool_specs` and routes their calls to
:class:`~dynamic_tools.markdown.service.MarkdownWorkflowService`, whose session store (a port) is
implemented by ``persistence/markdown_store.py``.
"""
