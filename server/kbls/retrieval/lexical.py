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
import threading
import weakref
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from kbls.query.filters import Filters
from kbls.query.syntax import content_terms, fts_match, number_forms, query_terms
from kbls.query.tokens import is_cjk, nfc
from kbls.retrieval.remembered import Remembered
from kbls.storage.records import ChunkRow
from kbls.storage.roles import Backend

#: a token as FTS5's unicode61 tokenizer sees it: letters and digits; `_` and punctuation split.
_TOKEN = re.compile(r"[^\W_]+")
#: the last query word also matches as a prefix (see `fts_match`) from this length on.
MIN_PREFIX_CHARS = 3
#: tokens of at most this many characters are looked for by a pattern (`_Candidates._holding_short`).
SHORT_TOKEN_CHARS = 2
#: the one character that `str.lower` makes two ("İ" -> "i̇"): text without it keeps its offsets.
_LONGER_IN_LOWER_CASE = "\u0130"


class _Candidates:
    """The lowercased texts of some of a query's candidates, joined into one string, so that
    each query word is looked for with `str.find` (C) over all of them at once: after a
    candidate's first whole occurrence the search jumps to the next candidate, and candidates
    without the word cost no Python at all. Testing every word in every candidate's own text
    cost Python calls per (candidate, word), about 900 of them a query (130 candidates, 7
    words); what is left is mostly `str.find` reading the text once per word
    (docs/benchmarks.md, the query-cost section).

    The texts are joined by a newline, which is no token character: a candidate's first and last
    token are whole exactly when they are in the candidate's own text."""

    def __init__(self, texts: Sequence[str]) -> None:
        """`texts`: each candidate's text (its texts joined by a newline, as `coverage` joins them),
        compared composed (NFC) as the index and the query are."""
        texts = [nfc(one) for one in texts]
        joined = "\n".join(texts)
        if _LONGER_IN_LOWER_CASE in joined:
            texts = [one.lower() for one in texts]
            joined = "\n".join(texts)
        else:  # lowercasing keeps every offset: once for all
            joined = joined.lower()
        self.text = joined
        #: where each candidate's text starts in `text`, in order.
        self.starts = list(accumulate((len(one) + 1 for one in texts[:-1]), initial=0))[: len(texts)]
        self._holding: dict[str, set[int]] = {}

    def holding_token(self, token: str) -> set[int]:
        """Indexes of the candidates that hold `token` (letters and digits only) as a whole
        token (remembered per token: several spellings of the query's words may share one)."""
        found = self._holding.get(token)
        if found is not None:
            return found
        if is_cjk(token):  # CJK is written without spaces: a bigram counts anywhere in a run
            found = self._holding[token] = self._holding_inside(token)
            return found
        short = len(token) <= SHORT_TOKEN_CHARS
        found = self._holding[token] = self._holding_short(token) if short else self._holding_at_start(token, True)
        return found

    def _holding_inside(self, needle: str) -> set[int]:
        """Indexes of the candidates whose text holds `needle` anywhere."""
        text, starts = self.text, self.starts
        found: set[int] = set()
        at = text.find(needle)
        while at >= 0:
            index = bisect_right(starts, at) - 1
            found.add(index)
            if index + 1 == len(starts):
                break
            at = text.find(needle, starts[index + 1])
        return found

    def _holding_short(self, token: str) -> set[int]:
        """`holding_token` for a token of a letter or two ("s" of "what's"), which is inside
        most words: a pattern that checks both neighbours in C, so only whole occurrences
        cost a Python step."""
        escaped = re.escape(token)
        search = re.compile(f"{escaped}(?<![^\\W_]{escaped})(?![^\\W_])").search
        text, starts = self.text, self.starts
        found: set[int] = set()
        match = search(text)
        while match is not None:
            index = bisect_right(starts, match.start()) - 1
            found.add(index)
            if index + 1 == len(starts):
                break
            match = search(text, starts[index + 1])
        return found

    def holding_prefix(self, prefix: str) -> set[int]:
        """Indexes of the candidates that hold a token starting with `prefix`."""
        return self._holding_at_start(prefix, False)

    def _holding_at_start(self, needle: str, whole: bool) -> set[int]:
        """Indexes of the candidates where `needle` starts a token and, if `whole`, also ends
        one. A `whole` needle is a token (letters and digits only): after an occurrence that is
        not whole the search goes on after its end, as no whole occurrence can start inside
        it (the character before would be a token one). A prefix may hold other characters
        (`read_to`): the search goes on one character further."""
        text, starts, size = self.text, self.starts, len(needle)
        last, step = len(text), size if whole else 1
        found: set[int] = set()
        at = text.find(needle)
        while at >= 0:
            end = at + size
            if (at == 0 or not text[at - 1].isalnum()) and (not whole or end == last or not text[end].isalnum()):
                index = bisect_right(starts, at) - 1
                found.add(index)
                if index + 1 == len(starts):
                    break
                at = text.find(needle, starts[index + 1])
            else:
                at = text.find(needle, at + step)
        return found


#: candidates are looked through in blocks of about this many characters: a block stays in
#: the CPU's first-level cache while each word is looked for in it.
BLOCK_CHARS = 16_000


def _blocks(sizes: Sequence[int]) -> Iterable[slice]:
    """Consecutive slices of candidates of `sizes` characters, about BLOCK_CHARS each."""
    start = total = 0
    for end, size in enumerate(sizes, 1):
        total += size
        if total >= BLOCK_CHARS:
            yield slice(start, end)
            start, total = end, 0
    if start < len(sizes):
        yield slice(start, len(sizes))


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

    def holders(self, candidates: _Candidates, prefix: str | None) -> set[int]:
        """Indexes of the `candidates` that hold one of the word's spellings, or (`prefix`: the
        word is the query's last, maybe still being typed) a token that starts with it."""
        found: set[int] = set()
        for token in self.tokens:
            if prefix is None or not token.startswith(prefix):  # (the prefix finds those anyway)
                found |= candidates.holding_token(token)
        for compound in self.compounds:
            found |= set.intersection(*(candidates.holding_token(t) for t in compound))
        if prefix is not None:
            found |= candidates.holding_prefix(prefix)
        return found


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
    #: which chunks hold which words, as far as the store's searches since its last change
    #: looked (`LexicalRanker.words`); None: measured afresh each time. A weak reference: the
    #: memory keeps this object, and a cycle would outlive the memory until Python's garbage
    #: collector ran (a collection every other search while the store changed under them).
    remembered: weakref.ReferenceType[Remembered] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, text: str, store: Backend, remembered: Remembered | None = None) -> QueryWords:
        terms = content_terms(text)
        parts = {term: tuple(_TOKEN.findall(term)) for term in terms}
        tokens = {token for split in parts.values() for token in split}
        chunks = max(store.chunk_count(), 1)
        docs = store.term_doc_counts(tokens)
        # A word the notes never spell as typed is looked for in its other number: "trains"
        # finds the note about the bullet train. A word they do spell as typed stays as typed,
        # so only the other spellings of those are counted (counting walks a term's whole
        # posting list in FTS5: a common plural such as "files" cost as much as its word).
        candidates = {
            term: number_forms(term) for term in terms if parts[term] == (term,) and not docs.get(term, 0)
        }
        docs.update(store.term_doc_counts({f for forms in candidates.values() for f in forms} - tokens))
        forms = {term: tuple(f for f in found if docs.get(f, 0)) for term, found in candidates.items()}
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
        memory = None if remembered is None else weakref.ref(remembered)
        return cls(words, prefix, sum(w.weight for w in words), fts_match(text, forms), memory)

    def coverage(self, *texts: str) -> float:
        """Share (0..1) of the query's content-word weight that `texts` contain as whole tokens
        (the last word, `prefix`, also as the start of one)."""
        return self.coverages([texts])[0]

    def chunk_coverages(self, rows: Iterable[ChunkRow]) -> dict[int, float]:
        """The `coverage` of each chunk's path, title, breadcrumb and body, by chunk rowid: from
        what is `remembered` where the chunk was looked at for a word before, else measured."""
        listed = list(rows)
        memo = None if self.remembered is None else self.remembered()
        if memo is None or self.total <= 0:
            shares = self.coverages([_texts(row) for row in listed])
            return {row.id: share for row, share in zip(listed, shares, strict=True)}
        ids = {row.id for row in listed}
        keys = [(word, self.prefix if word.term == self.prefix else None) for word in self.words]
        masks = dict.fromkeys(ids, 0)
        unseen: dict[int, set[int]] = {}  # bit -> rowids not looked at for that word
        with memo.lock:
            for bit, key in enumerate(keys):
                known = memo.holders.get(key)
                if known is None:
                    unseen[bit] = ids
                    continue
                for rowid in known.holding.keys() & ids:
                    masks[rowid] |= 1 << bit
                missing = ids - known.looked.keys()
                if missing:
                    unseen[bit] = missing
        if unseen:
            need = set().union(*unseen.values())
            measure = [row for row in listed if row.id in need]
            found = self._holders(
                [_texts(row) for row in measure], [(bit, self.words[bit]) for bit in unseen], [row.id for row in measure]
            )
            for bit, holding in found.items():
                flag = 1 << bit
                for rowid in holding:
                    masks[rowid] |= flag
            memo.learn({keys[bit]: (need, holding) for bit, holding in found.items()})
        shares = self._shares(list(masks.values()))
        return dict(zip(masks, shares, strict=True))

    def coverages(self, candidates: Sequence[Sequence[str]]) -> list[float]:
        """The `coverage` of each candidate's texts, all looked through at once (`_Candidates`)."""
        if self.total <= 0:
            return [0.0] * len(candidates)
        return self._shares(self._masks(candidates, list(enumerate(self.words))))

    def _masks(self, candidates: Sequence[Sequence[str]], words: Sequence[tuple[int, Word]]) -> list[int]:
        """Per candidate, the bits (`words`: bit and word) of the words its texts hold."""
        masks = [0] * len(candidates)
        for bit, indexes in self._holders(candidates, words, range(len(candidates))).items():
            flag = 1 << bit
            for index in indexes:
                masks[index] |= flag
        return masks

    def _holders(
        self, candidates: Sequence[Sequence[str]], words: Sequence[tuple[int, Word]], labels: Sequence[int]
    ) -> dict[int, set[int]]:
        """Per bit of `words` (bit and word), the `labels` (one a candidate: its index, its rowid)
        of the candidates whose texts hold it."""
        # ASCII candidates apart from the others: one "é" or emoji in a joined block makes
        # Python store all of it with two or four bytes a character, and lowercase it ten
        # times slower.
        texts = ["\n".join(parts) for parts in candidates]
        plain = [text.isascii() for text in texts]
        order = [i for i, one in enumerate(plain) if one] + [i for i, one in enumerate(plain) if not one]
        ordered = [texts[i] for i in order]
        labelled = [labels[i] for i in order]
        found: dict[int, set[int]] = {bit: set() for bit, _ in words}
        for block in _blocks([len(text) for text in ordered]):
            joined = _Candidates(ordered[block])
            for bit, word in words:
                into = found[bit]
                for index in word.holders(joined, self.prefix if word.term == self.prefix else None):
                    into.add(labelled[block.start + index])
        return found

    def _shares(self, masks: Sequence[int]) -> list[float]:
        """The coverage of each set of found words (a mask of their bits)."""
        # Summed in the words' order as one candidate's would be: few distinct sets, and the
        # same float whichever way a chunk is measured.
        shares: dict[int, float] = {}
        out = []
        for mask in masks:
            share = shares.get(mask)
            if share is None:
                found = 0.0
                for bit, word in enumerate(self.words):
                    if mask >> bit & 1:
                        found += word.weight
                share = shares[mask] = found / self.total
            out.append(share)
        return out


def _texts(row: ChunkRow) -> tuple[str, str, str, str, str]:
    """A chunk's texts that its coverage is measured on, with the tokens the index made of them
    (the FTS `terms` column: `span` is found in `BatchSpanProcessor`)."""
    return (row.path, row.title, row.breadcrumb, row.body, row.terms)


class LexicalRanker:
    """Ranks one store's chunks for a query by BM25 over its content words, remembering the
    query words, which candidates hold them and the candidates' rows until the store changes
    (`retrieval.remembered`)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._remembered: Remembered | None = None

    def words(self, text: str) -> QueryWords:
        """`QueryWords.of(text)`, remembered with what its searches learn until the store changes."""
        memo = self._current()
        if memo is None:  # inside a write transaction: nothing to remember
            return QueryWords.of(text, self.store)
        with memo.lock:
            known = memo.words.get(text)
        if known is not None:
            return known
        words = QueryWords.of(text, self.store, memo)
        memo.keep_words(text, words)
        return words

    def chunk_rows(self, rowids: list[int]) -> dict[int, ChunkRow]:
        """`Store.chunk_rows`, the rows remembered until the store changes (those of any mode's
        candidates: a hybrid search reads the lexical ones too)."""
        memo = self._current()
        if memo is None:
            return self.store.chunk_rows(rowids)
        with memo.lock:
            rows = memo.rows
            known = {rowid: rows[rowid] for rowid in rowids if rowid in rows}
        if len(known) == len(rowids):
            # In rowid order, as the store's IN query gives them: the order of the cosines
            # measured for them (`VectorIndex.similarities`) moves their last bits.
            return {rowid: known[rowid] for rowid in sorted(known)}
        read = self.store.chunk_rows([rowid for rowid in rowids if rowid not in known])
        memo.keep_rows(read)
        if not known:
            return read
        known.update(read)
        return {rowid: known[rowid] for rowid in sorted(known)}

    def _current(self) -> Remembered | None:
        """What is remembered of the store as it is now; None inside a write transaction."""
        generation = self.store.lexical_generation()
        if generation is None:
            return None
        with self._lock:
            memo = self._remembered
            if memo is None or memo.generation != generation:
                memo = self._remembered = Remembered(generation)
            return memo

    def rank(self, words: QueryWords, filters: Filters, wanted: int) -> list[tuple[int, float]]:
        """(chunk rowid, BM25 score: higher is better) of the best `wanted` chunks."""
        if not words.match:
            return []
        return [(rowid, -bm25) for rowid, bm25 in self.store.lexical(words.match, filters, wanted)]
