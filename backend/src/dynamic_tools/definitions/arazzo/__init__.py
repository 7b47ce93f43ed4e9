"""Arazzo 1.0 documents, the OpenAPI Initiative's format for chains of API calls.

- ``validation``: checking a document against the OAI JSON Schema (``schema-1.0.json``,
  Apache-2.0, unchanged) and the rules it cannot express;
- ``sources``: reading the OpenAPI and Arazzo descriptions a document names;
- ``convert`` (with ``operations``, ``workflow_graph``, ``requests``, ``expressions``,
  ``parts``): a document → tools and a workflow document of ours;
- ``catalog``: the import as a catalog (analysis, the workflow store it saves to);
- ``export``: one of our workflows → Arazzo and an OpenAPI description of its tools.
"""
