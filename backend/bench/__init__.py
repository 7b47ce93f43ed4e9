"""Benchmarks of Dynamic Tools: offline harnesses that run the real pipeline on public data."""
