"""The workflow engine core: pure Python, no framework, no I/O of its own.

Stages: load (YAML/JSON/XML → model) → validate (every violation, with paths) → plan → execute.
It talks to the world only through the Protocols of ``engine/ports.py``.
"""
