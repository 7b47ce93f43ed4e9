"""Workflow definitions: the documents on disk, their repository, authoring, and views of them.

Nothing here runs a workflow (``dynamic_tools.execution`` does): definitions are read,
validated, compiled into run plans and shown.
"""
