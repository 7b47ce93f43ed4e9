"""The single-shot pipeline: function schemas, prompts, the LLM port and BM25 narrowing."""
