"""Model providers: LLMs and embedders."""
