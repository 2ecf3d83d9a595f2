"""Lexical ranking: the query's content words through FTS5 and BM25, and how much of the query
a chunk covers.

BM25 orders the candidates well but its scale means nothing outside one query, so each
candidate also gets a `coverage` in 0..1: the share of the query's content words it contains,
each word weighted by its inverse document frequency (a rare word says more than a common
one). A chunk that only shares "from" with "stop my plants from getting sick" covers nothing
(function words are not content words), one that shares only "stop" covers a fifth of it.
A query word that no chunk spells as typed also counts in its regular singular/plural spelling
that the notes hold ("trains" finds "train"; see docs/adr/0003-ranking.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kbls.query.filters import Filters
from kbls.query.syntax import content_terms, fts_match, number_forms, query_terms
from kbls.storage.store import Store

#: a token as FTS5's unicode61 tokenizer sees it: letters and digits; `_` and punctuation split.
_TOKEN = re.compile(r"[^\W_]+")
#: the last query word also matches as a prefix (see `fts_match`) from this length on.
MIN_PREFIX_CHARS = 3


def _holds_token(text: str, token: str) -> bool:
    """Whether lowercased `text` holds `token` as a whole FTS5 token: `str.find` (C) up to the
    first whole occurrence; a regex alternation with a Python look at every occurrence's
    neighbours cost a third more, tokenizing the whole text ten times more."""
    start = text.find(token)
    while start >= 0:
        end = start + len(token)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(token, end)
    return False


def _holds_prefix(text: str, prefix: str) -> bool:
    """Whether lowercased `text` holds a token that starts with `prefix`."""
    start = text.find(prefix)
    while start >= 0:
        if start == 0 or not text[start - 1].isalnum():
            return True
        start = text.find(prefix, start + 1)
    return False


@dataclass(frozen=True)
class Word:
    """One content word of a query: the spellings that count as finding it (the word as typed,
    or its other number where the notes never spell it as typed), and its weight."""

    term: str
    #: spellings of one token each (`trains`, `train`); any of them found finds the word.
    tokens: frozenset[str]
    #: spellings of several tokens (`read_to_string`): all of one's tokens must be found.
    compounds: tuple[tuple[str, ...], ...]
    weight: float

    def found_in(self, text: str) -> bool:
        """Whether lowercased `text` holds one of the word's spellings (a C substring test
        first: this runs for every word of every candidate)."""
        for token in self.tokens:
            if token in text and _holds_token(text, token):
                return True
        return any(all(t in text and _holds_token(text, t) for t in compound) for compound in self.compounds)


@dataclass(frozen=True)
class QueryWords:
    """The content words of one query with their weights, to measure a chunk's coverage, and
    the FTS5 expression that finds the chunks holding them."""

    words: tuple[Word, ...]
    #: the last word, matched as a prefix too (the user may still be typing it).
    prefix: str | None
    #: the sum of the words' weights.
    total: float
    #: the FTS5 MATCH expression (see `fts_match`); empty when the query has no words.
    match: str

    @classmethod
    def of(cls, text: str, store: Store) -> QueryWords:
        terms = content_terms(text)
        parts = {term: tuple(_TOKEN.findall(term)) for term in terms}
        candidates = {term: number_forms(term) for term in terms if parts[term] == (term,)}
        tokens = {token for split in parts.values() for token in split}
        chunks = max(store.chunk_count(), 1)
        docs = store.term_doc_counts(tokens | {f for forms in candidates.values() for f in forms})
        # A word the notes never spell as typed is looked for in its other number: "trains"
        # finds the note about the bullet train. A word they do spell as typed stays as typed.
        forms = {
            term: tuple(f for f in found if docs.get(f, 0))
            for term, found in candidates.items() if not docs.get(term, 0)
        }
        forms = {term: found for term, found in forms.items() if found}

        def idf(count: int) -> float:
            n = min(count, chunks)
            return math.log((chunks - n + 0.5) / (n + 0.5) + 1.0)  # BM25's idf, always > 0

        words = tuple(
            Word(term, frozenset((term, *forms[term])), (), idf(sum(docs.get(f, 0) for f in forms[term])))
            if term in forms  # (the typed spelling is in no note)
            else Word(
                term, frozenset(split) if len(split) == 1 else frozenset(),
                (split,) if len(split) > 1 else (), max(idf(docs.get(t, 0)) for t in split),
            )
            for term, split in parts.items() if split
        )
        every = query_terms(text)
        last = terms[-1] if terms else ""
        prefix = last if len(last) >= MIN_PREFIX_CHARS and every and last == every[-1] else None
        return cls(words, prefix, sum(w.weight for w in words), fts_match(text, forms))

    def coverage(self, *texts: str) -> float:
        """Share (0..1) of the query's content-word weight that `texts` contain as whole tokens
        (the last word, `prefix`, also as the start of one)."""
        if self.total <= 0:
            return 0.0
        text = "\n".join(texts).lower()
        found = 0.0
        for word in self.words:
            if word.found_in(text) or (word.term == self.prefix and _holds_prefix(text, word.term)):
                found += word.weight
        return found / self.total


class LexicalRanker:
    """Ranks one store's chunks for a query by BM25 over its content words."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def rank(self, words: QueryWords, filters: Filters, wanted: int) -> list[tuple[int, float]]:
        """(chunk rowid, BM25 score: higher is better) of the best `wanted` chunks."""
        if not words.match:
            return []
        return [(rowid, -bm25) for rowid, bm25 in self.store.lexical(words.match, filters, wanted)]
