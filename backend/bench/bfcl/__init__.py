"""The BFCL harness: an honest offline measure of tool selection (README, "Tests and benchmarks").

``convert`` turns Berkeley Function Calling Leaderboard items into tool configs and computes the
request each gold answer must produce; ``harness`` runs the items through the real pipeline with
an oracle and a noisy fake LLM and reports the figures.
"""
