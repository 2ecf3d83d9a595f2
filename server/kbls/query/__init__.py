"""The query language: filters (tag:, path:, type:), globs and the FTS5 match expression."""
