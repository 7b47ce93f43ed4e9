"""Tool registry domain: ToolConfig, loading tool files, the registry, LLM tool context."""
