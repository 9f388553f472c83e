"""Recall: the memories that answer a question, ranked by fused retrievers."""
