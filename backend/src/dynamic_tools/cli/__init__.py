"""The ``dynamic-tools`` command line (Typer)."""
