"""Text as the SQLite backend's FTS5 table sees it, so the team store ranks words the same way.

Postgres' `ts_rank` is not BM25 (no document-length normalisation against the average, no IDF
of the collection), and the fused ranking of `kbls.retrieval.hybrid` is tuned on FTS5's
`bm25()`. The team store therefore keeps a term table (`chunk_terms`: chunk, term, weighted
count) and each chunk's token count, and computes FTS5's formula in SQL (`kbls.storage.postgres
.lexical`): per query phrase, IDF = ln((N − n + 0.5) / (n + 0.5)) (1e-6 when ≤ 0), weighted
frequency f = Σ column weight × occurrences, score = Σ IDF × f (k1 + 1) / (f + k1 (1 − b + b·D/avgD))
with D the chunk's tokens over its four columns (title, breadcrumb, body, and the extra terms of
`kbls.query.tokens.index_terms`); k1 = 1.2, b = 0.75 (FTS5's constants).

Tokens are FTS5 `unicode61 remove_diacritics 0`'s: runs of letters, digits and private-use
characters (`_` and marks separate), lowercased. `kbls.storage.fts` defines the SQLite side;
the two must change together.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from kbls.query.tokens import index_terms
from kbls.storage.fts import BM25_WEIGHTS

K1 = 1.2
B = 0.75
_TOKEN = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"((?:[^"]|"")*)"(\*?)')
#: above every character: the end of a prefix range (`term >= p AND term < p || MAX_CHAR`).
MAX_CHAR = "\U0010ffff"


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def chunk_terms(title: str, breadcrumb: str, body: str) -> tuple[dict[str, float], int]:
    """(term -> weighted count, token count) over the four texts of a chunk's FTS5 row: title,
    breadcrumb, body and the extra terms made of them (CamelCase parts, CJK bigrams)."""
    weighted: dict[str, float] = {}
    total = 0
    texts = (title, breadcrumb, body, index_terms(title, breadcrumb, body))
    for text, weight in zip(texts, BM25_WEIGHTS, strict=True):
        found = tokens(text)
        total += len(found)
        for term, count in Counter(found).items():
            weighted[term] = weighted.get(term, 0.0) + weight * count
    return weighted, total


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of an FTS5 MATCH expression: its tokens, and whether the last is a prefix."""

    tokens: tuple[str, ...]
    prefix: bool

    @property
    def range(self) -> tuple[str, str]:
        """The [low, high) range of terms of a one-token phrase (a single term, or a prefix)."""
        term = self.tokens[0]
        return term, (term + MAX_CHAR) if self.prefix else (term + "\x01")


def phrases(match: str) -> list[Phrase]:
    """The phrases of an FTS5 expression as `kbls.query.syntax.fts_match` writes it (quoted
    phrases, a `*` after a prefix, joined by OR and parentheses); a phrase of several tokens
    (`"foo_bar"`) is kept whole: the store scores it by its rarest token (no positions are kept)."""
    out = []
    for text, star in _PHRASE.findall(match):
        found = tuple(tokens(text.replace('""', '"')))
        if found:
            out.append(Phrase(found, bool(star)))
    return out
