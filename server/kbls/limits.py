"""Contract constants, written once: every module, the wire schema and the clients' tests read them here."""

from __future__ import annotations

import enum
from typing import Literal


class Mode(str, enum.Enum):
    """How a search ranks: both signals fused, the embedding alone, or FTS5 alone."""

    HYBRID = "hybrid"
    SEMANTIC = "semantic"
    LEXICAL = "lexical"


MODES: tuple[str, ...] = tuple(mode.value for mode in Mode)

# The index's state word (kb/indexStatus, `index.state` in answers).
State = Literal["loading", "indexing", "ready", "error"]

# Results per request (`limit` of kb/search, kb/related, `search.limit`).
MIN_LIMIT = 1
MAX_LIMIT = 200
# Related notes per kb/related answer when the request names no `limit`.
RELATED_LIMIT = 10

# Longest query text accepted; longer text is refused on the wire and cut in workspace/symbol.
MAX_QUERY_CHARS = 4096

# Largest LSP frame body accepted (bytes); a bigger one is answered with a parse error (kbls.jsonrpc).
MAX_FRAME_BYTES = 64 * 1024 * 1024

# Tags per `kb/tags` answer (its `limit`: 1..MAX_TAGS, default MAX_TAGS).
MAX_TAGS = 1000
