"""Dynamic Tools: turn HTTP APIs into tools that LLMs use correctly."""

__version__ = "0.1.0"
