"""Markdown workflows driven by the client LLM (seed 004): parser, session state, prompts, tools.

Framework-free: nothing here imports FastAPI, MCP or SQLAlchemy. The MCP adapter registers the
tool definitions of :mod:`~dynamic_tools.markdown.tool_specs` and routes their calls to
:class:`~dynamic_tools.markdown.service.MarkdownWorkflowService`, whose session store (a port) is
implemented by ``persistence/markdown_store.py``.
"""
