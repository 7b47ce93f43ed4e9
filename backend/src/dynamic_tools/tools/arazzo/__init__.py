"""Arazzo 1.0 documents, the OpenAPI Initiative's format for chains of API calls.

Checking them against the OAI JSON Schema (``schema-1.0.json``, Apache-2.0, unchanged) and the
rules it cannot express.
"""
