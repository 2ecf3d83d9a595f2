"""Storage: the SQLite store (files, chunks, FTS5, vectors), its schema and its recovery."""
