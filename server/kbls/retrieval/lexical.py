"""Lexical ranking: the query's words through FTS5 and BM25."""

from __future__ import annotations

from kbls.query.syntax import STOPWORDS, fts_match, query_terms
from kbls.storage.store import Filters, Store

#: a stopword matching more chunks than this is left out of the FTS query (see query.STOPWORDS).
STOPWORD_MAX_CHUNKS = 2000


class LexicalRanker:
    """Ranks one store's chunks for a query text by BM25."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def rank(self, text: str, filters: Filters, wanted: int) -> list[tuple[int, float]]:
        """(chunk rowid, score: higher is better) of the best `wanted` chunks."""
        match = fts_match(text, self._costly_stopwords(text))
        if not match:
            return []
        return [(rowid, -bm25) for rowid, bm25 in self.store.lexical(match, filters, wanted)]

    def _costly_stopwords(self, text: str) -> set[str]:
        """Function words of the query that match more than STOPWORD_MAX_CHUNKS chunks: scoring
        them would dominate the lexical query's cost while BM25 gives them next to no weight."""
        candidates = [t for t in query_terms(text) if t in STOPWORDS]
        if not candidates:
            return set()
        counts = self.store.term_doc_counts(candidates)
        return {t for t in candidates if counts.get(t, 0) > STOPWORD_MAX_CHUNKS}
