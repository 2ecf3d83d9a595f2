"""Lexical ranking: the query's content words through FTS5 and BM25, and how much of the query
a chunk covers.

BM25 orders the candidates well but its scale means nothing outside one query, so each
candidate also gets a `coverage` in 0..1: the share of the query's content words it contains,
each word weighted by its inverse document frequency (a rare word says more than a common
one). A chunk that only shares "from" with "stop my plants from getting sick" covers nothing
(function words are not content words), one that shares only "stop" covers a fifth of it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kbls.query.filters import Filters
from kbls.query.syntax import content_terms, fts_match, query_terms
from kbls.storage.store import Store

#: a token as FTS5's unicode61 tokenizer sees it: letters and digits; `_` and punctuation split.
_TOKEN = re.compile(r"[^\W_]+")
#: the last query word also matches as a prefix (see `fts_match`) from this length on.
MIN_PREFIX_CHARS = 3
#: marks, among found tokens, that a token starts with the query's last word.
PREFIX_FOUND = "\0prefix"


def _found_tokens(text: str, pattern: re.Pattern[str], prefix: str | None, wanted: int) -> set[str]:
    """The query tokens (alternatives of `pattern`) that lowercased `text` holds as whole FTS5
    tokens, plus PREFIX_FOUND when a token starts with `prefix`; stops once all `wanted` are
    found. One regex scan in C over the text, a Python look at the neighbours of each occurrence
    only: tokenizing every candidate's whole text cost ten times more."""
    found: set[str] = set()
    for match in pattern.finditer(text):
        start, end = match.span()
        if start and text[start - 1].isalnum():
            continue
        word = match.group()
        if end == len(text) or not text[end].isalnum():
            found.add(word)
        if prefix is not None and word.startswith(prefix):
            found.add(PREFIX_FOUND)
        if len(found) >= wanted:
            break
    return found


@dataclass(frozen=True)
class QueryWords:
    """The content words of one query with their weights, to measure a chunk's coverage."""

    #: (word, its tokens, weight); a word like `read_to_string` has several tokens.
    words: tuple[tuple[str, tuple[str, ...], float], ...]
    #: the last word, matched as a prefix too (the user may still be typing it).
    prefix: str | None
    #: every token of the words (and the prefix), longest first, as one alternation.
    pattern: re.Pattern[str]
    #: how many distinct finds complete a chunk's coverage: the alternatives, and the prefix.
    targets: int

    @classmethod
    def of(cls, text: str, store: Store) -> QueryWords:
        terms = content_terms(text)
        parts = {term: tuple(_TOKEN.findall(term)) for term in terms}
        tokens = {token for split in parts.values() for token in split}
        chunks = max(store.chunk_count(), 1)
        docs = store.term_doc_counts(tokens)

        def idf(token: str) -> float:
            n = docs.get(token, 0)
            return math.log((chunks - n + 0.5) / (n + 0.5) + 1.0)  # BM25's idf, always > 0

        words = tuple(
            (term, split, max((idf(t) for t in split), default=0.0)) for term, split in parts.items() if split
        )
        every = query_terms(text)
        last = terms[-1] if terms else ""
        prefix = last if len(last) >= MIN_PREFIX_CHARS and every and last == every[-1] else None
        alternatives = sorted(tokens | ({prefix} if prefix else set()), key=lambda t: (-len(t), t))
        pattern = re.compile("|".join(map(re.escape, alternatives)) if alternatives else "(?!)")
        return cls(words, prefix, pattern, len(alternatives) + (1 if prefix else 0))

    def coverage(self, *texts: str) -> float:
        """Share (0..1) of the query's content-word weight that `texts` contain."""
        total = sum(weight for _, _, weight in self.words)
        if total <= 0:
            return 0.0
        tokens = _found_tokens("\n".join(texts).lower(), self.pattern, self.prefix, self.targets)
        found = 0.0
        for term, split, weight in self.words:
            if all(t in tokens for t in split) or (term == self.prefix and PREFIX_FOUND in tokens):
                found += weight
        return found / total


class LexicalRanker:
    """Ranks one store's chunks for a query text by BM25 over its content words."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def rank(self, text: str, filters: Filters, wanted: int) -> list[tuple[int, float]]:
        """(chunk rowid, BM25 score: higher is better) of the best `wanted` chunks."""
        match = fts_match(text)
        if not match:
            return []
        return [(rowid, -bm25) for rowid, bm25 in self.store.lexical(match, filters, wanted)]
