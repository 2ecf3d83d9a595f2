"""Why a file of another format gave no text to index."""

from __future__ import annotations


class DocumentError(ValueError):
    """The file cannot be indexed; the message is the reason the user is shown (`kbls status`)."""
