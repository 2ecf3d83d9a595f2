"""Indexing: which files, how they parse and chunk, and the model that embeds them."""
