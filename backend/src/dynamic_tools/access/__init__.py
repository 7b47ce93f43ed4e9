"""Who may do what: principals, scopes, API keys, bearer tokens and the scope each action needs.

Every request is made by a :class:`~dynamic_tools.access.principals.Principal` — the holder of
``API_TOKEN`` (an admin), an API key (``keys.py``), or the subject of an OAuth access token
(``tokens.py``) — holding scopes (``read``, ``run``, ``author``, ``admin``). ``policy.py`` is
the one table of the scope each route and each MCP tool, resource and prompt needs. See the
README's "Access control".
"""
