"""Retrieval: vector scan, ranking and fusion, related notes, snippets."""
