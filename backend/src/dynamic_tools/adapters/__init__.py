"""Adapters over other libraries' internals: each library's private API used in one module.

``dbos_internals`` (DBOS) and ``mcp_internals`` (the MCP SDK) hold every access to a name the
library does not publish. Each is pinned to the library's version and has a unit test
(``tests/unit/adapters/``) that fails when a new version changes what it relies on.
"""
