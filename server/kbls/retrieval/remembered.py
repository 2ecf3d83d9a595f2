"""What a store's searches remember until the store changes, so repeated words cost nothing: see
`Remembered`. Used by `retrieval.lexical` (`LexicalRanker.words`, `LexicalRanker.chunk_rows`,
`QueryWords.chunk_coverages`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kbls.storage.records import ChunkRow

if TYPE_CHECKING:  # (lexical.py imports this module)
    from kbls.retrieval.lexical import QueryWords, Word

#: a store's searches forget what they remember beyond this many query texts, or this many
#: (word, chunk) looks (about 50 bytes each; a search as typed looks at about 600), or this
#: many chunk rows (about 1.5 kB each with their text), and start afresh: a few MB at most.
REMEMBERED_QUERIES = 2_000
REMEMBERED_LOOKS = 100_000
REMEMBERED_ROWS = 4_096


class Holders:
    """Which of the chunks looked at for one query word hold it. Dicts with no values rather
    than sets: a dict of ints is left alone by Python's garbage collector, a set is not, and a
    long-running daemon keeps thousands of these (sets made every other search collect)."""

    __slots__ = ("holding", "looked")

    def __init__(self) -> None:
        self.looked: dict[int, None] = {}
        self.holding: dict[int, None] = {}

    def add(self, looked: Iterable[int], holding: Iterable[int]) -> None:
        self.holding.update(dict.fromkeys(holding))  # (first: a rowid looked at is always known)
        self.looked.update(dict.fromkeys(looked))


class Remembered:
    """What one store's searches learnt since the store last changed: each query text's
    `QueryWords` (their FTS5 document counts, spellings and weights), per query word which of
    the chunks looked at hold it, and the candidates' rows. Search-as-you-type and a repeated
    query send the same words again over mostly the same candidates: their rows and coverage
    are then read from here instead of the store and the chunks' text (docs/benchmarks.md,
    the query-cost section).

    Valid for one `generation` of the store (`Store.lexical_generation`, moved by every commit
    seen); a search that meets a newer one starts a new `Remembered`. A search racing a commit
    may mix both states, as its ranking and its rows already may."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.lock = threading.Lock()
        self.words: dict[str, QueryWords] = {}
        #: per (word, its prefix or None): the chunks looked at and those holding the word.
        self.holders: dict[tuple[Word, str | None], Holders] = {}
        self._looks = 0
        self.rows: dict[int, ChunkRow] = {}

    def keep_words(self, text: str, words: QueryWords) -> None:
        with self.lock:
            if len(self.words) >= REMEMBERED_QUERIES:
                self.words = {}
            self.words[text] = words

    def keep_rows(self, rows: dict[int, ChunkRow]) -> None:
        if len(rows) > REMEMBERED_ROWS:  # (a search of limit 200, grouped: up to 6,000 candidates)
            return
        with self.lock:
            if len(self.rows) + len(rows) > REMEMBERED_ROWS:
                self.rows = {}
            self.rows.update(rows)

    def learn(self, seen: dict[tuple[Word, str | None], tuple[set[int], set[int]]]) -> None:
        """Adds, per word, the rowids looked at and those of them found holding it."""
        with self.lock:
            self._looks += sum(len(looked) for looked, _ in seen.values())
            if self._looks > REMEMBERED_LOOKS:
                self.holders, self._looks = {}, 0
            for key, (looked, holding) in seen.items():
                known = self.holders.get(key)
                if known is None:
                    known = self.holders[key] = Holders()
                known.add(looked, holding)
