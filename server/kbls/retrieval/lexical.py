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
from kbls.query.syntax import content_terms, fts_match, number_forms, query_terms
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
    """The content words of one query with their weights, to measure a chunk's coverage, and
    the FTS5 expression that finds the chunks holding them."""

    #: (word, its spellings, weight); each spelling is its tokens (`read_to_string` has three);
    #: a word's other spellings are its singular/plural forms that the notes contain.
    words: tuple[tuple[str, tuple[tuple[str, ...], ...], float], ...]
    #: the last word, matched as a prefix too (the user may still be typing it).
    prefix: str | None
    #: every token of the words (and the prefix), longest first, as one alternation.
    pattern: re.Pattern[str]
    #: how many distinct finds complete a chunk's coverage: the alternatives, and the prefix.
    targets: int
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
            (
                term,
                (split, *((f,) for f in forms.get(term, ()))),
                # every spelling counts towards how common the word is (at most all chunks)
                idf(sum(docs.get(f, 0) for f in (term, *forms[term]))) if term in forms
                else max((idf(docs.get(t, 0)) for t in split), default=0.0),
            )
            for term, split in parts.items() if split
        )
        every = query_terms(text)
        last = terms[-1] if terms else ""
        prefix = last if len(last) >= MIN_PREFIX_CHARS and every and last == every[-1] else None
        spelled = tokens | {f for found in forms.values() for f in found}
        alternatives = sorted(spelled | ({prefix} if prefix else set()), key=lambda t: (-len(t), t))
        pattern = re.compile("|".join(map(re.escape, alternatives)) if alternatives else "(?!)")
        return cls(words, prefix, pattern, len(alternatives) + (1 if prefix else 0), fts_match(text, forms))

    def coverage(self, *texts: str) -> float:
        """Share (0..1) of the query's content-word weight that `texts` contain."""
        total = sum(weight for _, _, weight in self.words)
        if total <= 0:
            return 0.0
        tokens = _found_tokens("\n".join(texts).lower(), self.pattern, self.prefix, self.targets)
        found = 0.0
        for term, spellings, weight in self.words:
            if any(all(t in tokens for t in split) for split in spellings) or (
                term == self.prefix and PREFIX_FOUND in tokens
            ):
                found += weight
        return found / total


class LexicalRanker:
    """Ranks one store's chunks for a query by BM25 over its content words."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def rank(self, words: QueryWords, filters: Filters, wanted: int) -> list[tuple[int, float]]:
        """(chunk rowid, BM25 score: higher is better) of the best `wanted` chunks."""
        if not words.match:
            return []
        return [(rowid, -bm25) for rowid, bm25 in self.store.lexical(words.match, filters, wanted)]
