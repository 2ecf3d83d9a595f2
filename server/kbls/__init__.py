"""kbls: a knowledge-base language server — local semantic search over a workspace's notes."""

__version__ = "0.1.0"
