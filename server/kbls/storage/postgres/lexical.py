"""BM25 over the team store's term table, computed as FTS5's `bm25()` computes it (see `terms`).

Statistics (chunk count, average tokens a chunk, each term's document count) are the root's,
as an FTS5 table's are its store's; they are remembered until the root's `revision` moves
(every committed write bumps it), like `kbls.storage.fts.DocCounts` on SQLite.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable

from kbls.query.filters import Filters
from kbls.storage.postgres.connection import PgPool
from kbls.storage.postgres.filters import Params, filter_sql
from kbls.storage.postgres.terms import K1, B, Phrase, phrases

#: the counts of at most this many terms are kept, then started afresh (as on SQLite).
DOC_COUNTS_KEPT = 20_000

_SCORE_SQL = """
WITH p AS (
    SELECT * FROM unnest(%(i)s::int[], %(n)s::int[], %(lo)s::text[], %(hi)s::text[], %(idf)s::float8[])
        AS p(i, n, lo, hi, idf)
), token_hits AS (
    SELECT ct.chunk_id, ct.ntok, p.i, p.n, p.idf, p.lo, sum(ct.tf) AS f
    FROM p JOIN chunk_terms ct ON ct.root_id = %(root)s AND ct.term >= p.lo AND ct.term < p.hi
    GROUP BY ct.chunk_id, ct.ntok, p.i, p.n, p.idf, p.lo
), phrase_hits AS (
    SELECT chunk_id, ntok, idf, min(f) AS f FROM token_hits GROUP BY chunk_id, ntok, i, n, idf HAVING count(*) = n
)
SELECT h.chunk_id, -sum(h.idf * h.f * %(k1p1)s / (h.f + %(k1)s * (1 - %(b)s + %(b)s * h.ntok / %(avgdl)s))) AS rank
FROM phrase_hits h {join}
{where}
GROUP BY h.chunk_id ORDER BY rank, h.chunk_id LIMIT %(limit)s
"""

#: how many chunks hold each phrase (every token of it), all phrases of a query in one round trip.
_PHRASE_DOCS_SQL = """
SELECT i, count(*) FROM (
    SELECT ct.chunk_id, p.i FROM unnest(%(i)s::int[], %(n)s::int[], %(lo)s::text[], %(hi)s::text[]) AS p(i, n, lo, hi)
    JOIN chunk_terms ct ON ct.root_id = %(root)s AND ct.term >= p.lo AND ct.term < p.hi
    GROUP BY ct.chunk_id, p.i, p.n HAVING count(DISTINCT p.lo) = p.n
) AS holding GROUP BY i
"""


def _ranges(phrase: Phrase) -> list[tuple[str, str]]:
    """The term ranges of each token of a phrase (the last one a prefix range for a prefix phrase)."""
    last = len(phrase.tokens) - 1
    return sorted({Phrase((t,), phrase.prefix and k == last).range for k, t in enumerate(phrase.tokens)})


class PgLexical:
    """Lexical search of one root (`LexicalSearch`), with the root's statistics remembered."""

    def __init__(self, pool: PgPool, root_id: int) -> None:
        self.pool = pool
        self.root_id = root_id
        self._lock = threading.Lock()
        self._revision: int | None = None
        self._stats: tuple[int, float] | None = None
        self._docs: dict[str, int] = {}
        self._phrase_docs: dict[Phrase, int] = {}

    def revision(self) -> int:
        row = self.pool.one("SELECT revision FROM roots WHERE id = %s", (self.root_id,))
        return int(row[0]) if row else -1

    def _current(self) -> int:
        """The root's revision now; forgets every count when it moved."""
        revision = self.revision()
        with self._lock:
            if revision != self._revision:
                self._revision, self._stats, self._docs, self._phrase_docs = revision, None, {}, {}
        return revision

    def stats(self) -> tuple[int, float]:
        """(chunks of the root, average tokens a chunk)."""
        self._current()
        with self._lock:
            if self._stats is not None:
                return self._stats
        row = self.pool.one("SELECT count(*), coalesce(sum(ntok), 0) FROM chunks WHERE root_id = %s", (self.root_id,))
        count, tokens = (int(row[0]), float(row[1])) if row else (0, 0.0)
        stats = (count, tokens / count if count else 1.0)
        with self._lock:
            self._stats = stats
        return stats

    def term_doc_counts(self, terms: Iterable[str]) -> dict[str, int]:
        wanted = set(terms)
        self._current()
        with self._lock:
            known = {t: self._docs[t] for t in wanted if t in self._docs}
        missing = sorted(wanted - set(known))
        if missing:
            rows = self.pool.fetch(
                "SELECT term, count(*) FROM chunk_terms WHERE root_id = %s AND term = ANY(%s) GROUP BY term",
                (self.root_id, missing),
            )
            found = {str(t): int(n) for t, n in rows}
            counted = {t: found.get(t, 0) for t in missing}
            known.update(counted)
            with self._lock:
                if len(self._docs) + len(counted) > DOC_COUNTS_KEPT:
                    self._docs = {}
                self._docs.update(counted)
        return {t: n for t, n in known.items() if n}

    def _phrase_doc_counts(self, found: list[Phrase]) -> list[int]:
        """How many chunks of the root hold each phrase (remembered until the root changes)."""
        with self._lock:
            known = {p: self._phrase_docs[p] for p in found if p in self._phrase_docs}
        missing = [p for p in dict.fromkeys(found) if p not in known]
        if missing:
            rows = [(index, len(ranges), low, high) for index, ranges in enumerate(map(_ranges, missing)) for low, high in ranges]
            params: Params = {"root": self.root_id, **{key: [r[k] for r in rows] for k, key in enumerate(("i", "n", "lo", "hi"))}}
            counted = {int(i): int(n) for i, n in self.pool.fetch(_PHRASE_DOCS_SQL, params)}
            fresh = {phrase: counted.get(index, 0) for index, phrase in enumerate(missing)}
            known.update(fresh)
            with self._lock:
                self._phrase_docs.update(fresh)
        return [known[p] for p in found]

    def lexical(self, match: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        """(chunk id, FTS5-style bm25: lower is better) best first."""
        found = phrases(match)
        if not found:
            return []
        chunks, avgdl = self.stats()
        if not chunks:
            return []
        params: Params = {"root": self.root_id, "k1": K1, "k1p1": K1 + 1, "b": B, "avgdl": avgdl, "limit": limit}
        i, n, lo, hi, idf = [], [], [], [], []
        for index, (phrase, docs) in enumerate(zip(found, self._phrase_doc_counts(found), strict=True)):
            weight = math.log((chunks - docs + 0.5) / (docs + 0.5))
            ranges = _ranges(phrase)
            for low, high in ranges:
                i.append(index)
                n.append(len(ranges))
                lo.append(low)
                hi.append(high)
                idf.append(weight if weight > 0 else 1e-6)
        params.update(i=i, n=n, lo=lo, hi=hi, idf=idf)
        if filters.empty:
            sql = _SCORE_SQL.format(join="", where="")
        else:
            where = filter_sql(filters, params)
            sql = _SCORE_SQL.format(
                join="JOIN chunks c ON c.id = h.chunk_id JOIN files f ON f.id = c.file_id", where=f"WHERE {where}"
            )
        return [(int(chunk), float(rank)) for chunk, rank in self.pool.fetch(sql, params)]
