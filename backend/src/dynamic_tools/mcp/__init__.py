"""The MCP adapter: tools in four layers, resources, prompts, tasks, error mapping."""
